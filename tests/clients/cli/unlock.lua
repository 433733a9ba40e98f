-- Release a single-node lock only if it is still ours (compare-and-delete).
-- KEYS[1]: the lock; ARGV[1]: our token.
if redis.call("get", KEYS[1]) == ARGV[1] then
  return redis.call("del", KEYS[1])
else
  return 0
end
