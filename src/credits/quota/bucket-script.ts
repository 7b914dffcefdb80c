/**
 * What the bucket script is asked: `reserve` takes `amount` if the bucket holds it (all or
 * nothing), `upto` takes what it holds of `amount` in whole credits, `settle` books `amount` as
 * what a hold was charged of what it took and gives back the rest, `carry` takes `amount` (negative:
 * gives back) that an instance took on its own while Redis was away.
 */
export type BucketMode = 'reserve' | 'upto' | 'settle' | 'carry';

/**
 * The answer: `[outcome, credits left as a string, the Redis generation, Redis's clock in ms]`.
 * The outcome is 1 or 0 (taken or not: `reserve`; applied or already applied: `settle`, `carry`),
 * the credits taken (`upto`), or -1 when the command came past its deadline and did nothing.
 */
export type BucketAnswer = [number, string, string, number];

/** The outcome of a command that came past its deadline: it changed nothing. */
export const LATE = -1;

/**
 * One bucket, atomically, on Redis's clock (instances' clocks never matter).
 *
 * KEYS: the bucket (a hash `{ c: credits, at: ms }`), the hold's or carry's mark, and the
 * generation (Redis's clock when this Redis first ran the script: lost with everything else, so
 * a new one says the buckets were lost). ARGV: the quota's credits, its window in ms, the amount,
 * the mode, a deadline on Redis's clock (0: none), a seed (the asking instance's estimate of the
 * bucket, '' for none), the generation the seed was heard in, and how long a mark lives (ms).
 *
 * Past the deadline nothing is done: a reservation its instance gave up on never lands. A bucket
 * Redis does not hold is full, unless a seed heard in another generation says what it held
 * before Redis lost it. It is refilled for the time since `at`, then: `reserve` and `upto` take
 * and add what they took to the hold's mark; `settle` gives the mark's credits back less
 * `amount` and deletes the mark, so that a settlement sent again does nothing (nor one whose hold
 * took nothing here); `carry` applies once per id (`SET NX` of its mark). Never above the quota;
 * it may go below 0. The bucket expires once it would be full again.
 */
export const BUCKET_SCRIPT = `
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local amount = tonumber(ARGV[3])
local mode = ARGV[4]
local deadline = tonumber(ARGV[5])
local markMs = tonumber(ARGV[8])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local generation = redis.call('GET', KEYS[3])
if not generation then
  generation = tostring(now)
  redis.call('SET', KEYS[3], generation)
end
if deadline > 0 and now > deadline then return {-1, '0', generation, now} end
local state = redis.call('HMGET', KEYS[1], 'c', 'at')
local credits = tonumber(state[1])
local at = tonumber(state[2]) or now
if not credits then
  credits = limit
  if ARGV[6] ~= '' and ARGV[7] ~= generation then credits = math.min(limit, tonumber(ARGV[6])) end
end
if now > at then credits = credits + (now - at) * limit / window; at = now end
if credits > limit then credits = limit end
local outcome = 1
if mode == 'reserve' or mode == 'upto' then
  if mode == 'reserve' then
    if amount > credits then return {0, tostring(credits), generation, now} end
  else
    amount = math.max(0, math.min(amount, math.floor(credits)))
    outcome = amount
  end
  credits = credits - amount
  redis.call('INCRBYFLOAT', KEYS[2], amount)
  redis.call('PEXPIRE', KEYS[2], markMs)
elseif mode == 'settle' then
  local taken = tonumber(redis.call('GET', KEYS[2]))
  if not taken then return {0, tostring(credits), generation, now} end
  redis.call('DEL', KEYS[2])
  credits = math.min(limit, credits + taken - amount)
else
  if not redis.call('SET', KEYS[2], '1', 'NX', 'PX', markMs) then
    return {0, tostring(credits), generation, now}
  end
  credits = math.min(limit, credits - amount)
end
redis.call('HSET', KEYS[1], 'c', tostring(credits), 'at', at)
redis.call('PEXPIRE', KEYS[1], math.ceil((limit - credits) * window / limit) + 1000)
return {outcome, tostring(credits), generation, now}
`;
