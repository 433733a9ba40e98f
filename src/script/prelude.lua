-- Builds Redis 7.0's two script environments in one interpreter, once, with the real globals:
--   * EVAL's: the globals table itself (scriptingInit), with the `redis` API, KEYS and ARGV;
--   * FUNCTION's (luaEngineInitEngine): an empty read-only table whose metatable's __index is
--     a second globals table holding the function `redis` API. While FUNCTION LOAD runs a
--     library, that __index points at the loading API instead (`redis.register_function`).
-- Every table reachable from either is made read-only with Redis's patched Lua, so `#`, `next`,
-- `pairs` and C functions see real tables and writes raise "Attempt to modify a readonly
-- table". The helpers passed in are C functions (script/ffi.rs); none stays reachable.
local R, protect, set_readonly, index_error, redis_pcall = ...
local G = _G
local pairs, setmetatable, getmetatable, loadstring = pairs, setmetatable, getmetatable, loadstring

-- Redis's error handler, verbatim: errors become {err=...} tables with the script position.
-- One closure for EVAL (the global __redis__err__handler) and one for functions.
local handler_code = "local dbg = debug\n" ..
  "local error_handler = function (err)\n" ..
  "  local i = dbg.getinfo(2,'nSl')\n" ..
  "  if i and i.what == 'C' then\n" ..
  "    i = dbg.getinfo(3,'nSl')\n" ..
  "  end\n" ..
  "  if type(err) ~= 'table' then\n" ..
  "    err = {err='ERR ' .. tostring(err)}" ..
  "  end" ..
  "  if i then\n" ..
  "    err['source'] = i.source\n" ..
  "    err['line'] = i.currentline\n" ..
  "  end" ..
  "  return err\n" ..
  "end\n" ..
  "return error_handler"
local eval_handler = loadstring(handler_code, '@err_handler_def')()
local function_handler = loadstring(handler_code, '@err_handler_def')()

-- The globals Redis 7.0.15 (with its later Lua sandbox fixes) leaves to scripts: no getfenv,
-- setfenv or newproxy, no debug, io, os, print, dofile, loadfile, module or require.
local allowed = {
  _G = true, _VERSION = true, assert = true, collectgarbage = true, coroutine = true,
  error = true, gcinfo = true, getmetatable = true, ipairs = true, load = true,
  loadstring = true, math = true, next = true, pairs = true, pcall = true, rawequal = true,
  rawget = true, rawset = true, select = true, setmetatable = true, string = true,
  table = true, tonumber = true, tostring = true, type = true, unpack = true, xpcall = true,
}
local drop = {}
for k in pairs(G) do if not allowed[k] then drop[#drop + 1] = k end end
for i = 1, #drop do G[drop[i]] = nil end
G.pcall = redis_pcall
G.bit, G.struct, G.cmsgpack = R.bit, R.struct, R.cmsgpack

-- The function engine's own globals: the same libraries, its own `redis` and `cjson`.
local FG = {}
for k, v in pairs(G) do FG[k] = v end
FG._G = FG
FG.redis, FG.cjson = R.redis_function, R.cjson_function

G.redis, G.cjson = R.redis_eval, R.cjson_eval
G.__redis__err__handler = eval_handler

-- Reading a missing global is an error (luaSetErrorMetatable), then lock everything.
local function error_metatable(t) setmetatable(t, {__index = index_error}) return t end
error_metatable(G)
error_metatable(FG)
protect(G)
protect(FG)
-- Basic types' metatables are read-only too (Redis's fix for CVE-2025-46818).
protect(getmetatable(''))

-- What a library's code sees while FUNCTION LOAD runs it: only the loading `redis` API.
local library_api = error_metatable({redis = error_metatable(R.redis_load)})
protect(library_api)

-- The environment functions run in: empty, read-only, reading through to FG.
local env_meta = {__index = FG}
local env = {}
setmetatable(env, env_meta)
set_readonly(env_meta, true)
set_readonly(env, true)

return function_handler, env, env_meta, FG, library_api
