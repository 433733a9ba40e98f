-- Builds Redis 7.0's script environment once per interpreter. Runs with the real globals;
-- afterwards scripts see only `P`, a read-only proxy of them (Redis patches its Lua with
-- read-only tables; resplock emulates them with proxies whose writes raise Redis's error).
local make_tramp, R = ...
local G = _G
local dbg = debug
local setfenv, type, tostring, select, unpack = setfenv, type, tostring, select, unpack
local raw_rawget, raw_rawset, raw_next = rawget, rawset, next
local raw_setmetatable, raw_getmetatable = setmetatable, getmetatable
local raw_loadstring, raw_pcall = loadstring, pcall
local tinsert, tremove, tsort, tconcat = table.insert, table.remove, table.sort, table.concat
local RO = 'Attempt to modify a readonly table'

G.redis, G.cjson, G.bit, G.struct, G.cmsgpack = R.redis, R.cjson, R.bit, R.struct, R.cmsgpack
G.unpack = R.unpack -- Lua's, with the fix for CVE-2025-46817

-- Redis's error handler, verbatim: errors become {err=...} tables with the script position.
function __redis__err__handler(err)
  local i = dbg.getinfo(2,'nSl')
  if i and i.what == 'C' then
    i = dbg.getinfo(3,'nSl')
  end
  if type(err) ~= 'table' then
    err = {err='ERR ' .. tostring(err)}
  end
  if i then
    err['source'] = i.source
    err['line'] = i.currentline
  end
  return err
end

local PROXY = raw_setmetatable({}, {__mode = 'k'}) -- proxy -> real table
local FAKE_MT = raw_setmetatable({}, {__mode = 'k'}) -- proxy -> what getmetatable shows
local ro_newindex = make_tramp(function() return 'where', RO end)
local function protect(real)
  local p = {}
  PROXY[p] = real
  raw_setmetatable(p, {__index = real, __newindex = ro_newindex, __metatable = false})
  return p
end
local function real_of(t) return PROXY[t] or t end

-- Redis's pcall: an error table is returned as its `err` string.
local function pack(...) return {n = select('#', ...), ...} end
local function pcall_impl(...)
  local r = pack(raw_pcall(...))
  if not r[1] and type(r[2]) == 'table' then
    local m = r[2].err
    if type(m) == 'string' or type(m) == 'number' then r[2] = m end
  end
  return false, unpack(r, 1, r.n)
end

local P -- the globals proxy, set below
local function chunk_name_error(code, name)
  -- Redis's Lua never loads bytecode: it parses it as text and fails on the first byte.
  local _, e = raw_loadstring('\1', name or code)
  return (e:gsub("'char%(1%)'$", "'char(27)'"))
end
local function loadstring_impl(code, name)
  if type(code) == 'string' and code:byte(1) == 27 then
    return nil, chunk_name_error(code, name)
  end
  local f, e = raw_loadstring(code, name)
  if f then setfenv(f, P) end
  return f, e
end
local function load_impl(reader, name)
  local parts = {}
  while true do
    local piece = reader()
    if piece == nil or piece == '' then break end
    if type(piece) ~= 'string' then return nil, 'reader function must return a string' end
    tinsert(parts, piece)
  end
  return loadstring_impl(tconcat(parts), name or '=(load)')
end

local allowed = {
  _G = true, _VERSION = true, __redis__err__handler = true, assert = true, bit = true,
  cjson = true, cmsgpack = true, collectgarbage = true, coroutine = true, error = true,
  gcinfo = true, getmetatable = true, ipairs = true, load = true, loadstring = true,
  math = true, next = true, pairs = true, pcall = true, rawequal = true, rawget = true,
  rawset = true, redis = true, select = true, setmetatable = true, string = true,
  struct = true, table = true, tonumber = true, tostring = true, type = true,
  unpack = true, xpcall = true,
}
local drop = {}
for k in raw_next, G do if not allowed[k] then drop[#drop + 1] = k end end
for _, k in ipairs(drop) do G[k] = nil end

local string_mt = raw_getmetatable('')
local libs = {'string', 'table', 'math', 'coroutine', 'redis', 'cjson', 'bit', 'struct', 'cmsgpack'}
local real_table = G.table

G.pcall = make_tramp(pcall_impl)
G.loadstring = loadstring_impl
G.load = load_impl
G.rawset = make_tramp(function(t, k, v)
  if PROXY[t] then return true, RO end
  return false, raw_rawset(t, k, v)
end)
G.rawget = function(t, k) return raw_rawget(real_of(t), k) end
G.next = function(t, k) return raw_next(real_of(t), k) end
G.pairs = function(t) return raw_next, real_of(t), nil end
G.setmetatable = make_tramp(function(t, mt)
  if PROXY[t] then return true, RO end
  return false, raw_setmetatable(t, mt)
end)
local string_mt_proxy
G.getmetatable = function(t)
  if PROXY[t] then return FAKE_MT[t] end
  if type(t) == 'string' then return string_mt_proxy end
  return raw_getmetatable(t)
end
local function guard(f)
  return make_tramp(function(t, ...)
    if PROXY[t] then return true, RO end
    return false, f(t, ...)
  end)
end
real_table.insert, real_table.remove, real_table.sort = guard(tinsert), guard(tremove), guard(tsort)

for _, name in ipairs(libs) do G[name] = protect(G[name]) end
string_mt.__index = G.string
string_mt_proxy = protect(string_mt)

-- Reading a missing global is an error; the proxy reads through to G, G's metatable raises.
local global_index = make_tramp(function(_, k)
  return 'where', "Script attempted to access nonexistent global variable '" .. tostring(k) .. "'"
end)
raw_setmetatable(G, {__index = global_index})
P = protect(G)
FAKE_MT[P] = protect({__index = global_index, __newindex = ro_newindex})
G._G = P

local function setenv(f) setfenv(f, P) return f end
local function run(f) return xpcall(f, __redis__err__handler) end
return setenv, run
