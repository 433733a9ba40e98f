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

-- Argument checks as luaL_check* words them, raised through the trampoline so the message
-- names the function as the script called it, at the script's position.
local function typename(n, i, v)
  if n < i then return 'no value' end
  return type(v)
end
G.pcall = make_tramp(function(...)
  -- Redis's pcall with nothing to call answers as if it had been given a boolean.
  if select('#', ...) == 0 then return false, false, 'attempt to call a boolean value' end
  return pcall_impl(...)
end)
G.loadstring = make_tramp(function(...)
  local n, code, name = select('#', ...), ...
  local tc, tn = type(code), type(name)
  if tc ~= 'string' and tc ~= 'number' then
    return 1, 'string expected, got ' .. typename(n, 1, code)
  end
  if name ~= nil and tn ~= 'string' and tn ~= 'number' then
    return 2, 'string expected, got ' .. tn
  end
  return false, loadstring_impl(tostring(code), name and tostring(name))
end)
G.load = make_tramp(function(...)
  local n, reader, name = select('#', ...), ...
  if type(reader) ~= 'function' then
    return 1, 'function expected, got ' .. typename(n, 1, reader)
  end
  return false, load_impl(reader, name)
end)
-- The raw-access functions, guarded in C (sandbox_ffi.rs) so that Lua's own implementations
-- run in the frame the script called and report errors as Redis does.
local S = R.sandbox
local reg = dbg.getregistry()
reg['resplock.proxy'] = PROXY
reg['resplock.fake_mt'] = FAKE_MT
G.rawset, G.rawget, G.next, G.pairs = S.rawset, S.rawget, S.next, S.pairs
G.setmetatable, G.getmetatable = S.setmetatable, S.getmetatable
real_table.insert, real_table.remove, real_table.sort = S.insert, S.remove, S.sort
local string_mt_proxy

for _, name in ipairs(libs) do G[name] = protect(G[name]) end
string_mt.__index = G.string
string_mt_proxy = protect(string_mt)
reg['resplock.string_mt'] = string_mt_proxy

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
