-- Redisson's unlock: one hold less; the last one deletes the lock and tells the waiters.
-- KEYS[1]: the lock; KEYS[2]: its channel; ARGV[1]: lease (ms); ARGV[2]: owner.
-- nil: not the owner; 0: still held (re-entered); 1: released.
if redis.call("hexists", KEYS[1], ARGV[2]) == 0 then
  return nil
end
local left = redis.call("hincrby", KEYS[1], ARGV[2], -1)
if left > 0 then
  redis.call("pexpire", KEYS[1], ARGV[1])
  return 0
end
redis.call("del", KEYS[1])
redis.call("publish", KEYS[2], "unlocked")
return 1
