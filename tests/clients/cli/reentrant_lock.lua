-- Redisson's reentrant lock: a hash of owner -> hold count with a lease.
-- KEYS[1]: the lock; ARGV[1]: lease (ms); ARGV[2]: owner. nil when acquired, else the
-- lease left of the current owner (ms).
if redis.call("exists", KEYS[1]) == 0 or redis.call("hexists", KEYS[1], ARGV[2]) == 1 then
  redis.call("hincrby", KEYS[1], ARGV[2], 1)
  redis.call("pexpire", KEYS[1], ARGV[1])
  return nil
end
return redis.call("pttl", KEYS[1])
