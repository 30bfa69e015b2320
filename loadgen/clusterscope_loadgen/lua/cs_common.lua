-- Shared by the clusterscope loadgen scripts (sysbench 1.0.20, LuaJIT).
-- Credentials: the driver passes no password in argv; libmariadb reads MYSQL_PWD.
--
-- A script runs one or several variants ("the mix", --mix=name;key=value;...|name;...,
-- each variant's keys overriding the script's flat options). Every event runs one step of
-- every variant, in a fresh random order, and times each step on its own: so in an
-- interleaved window the variants share every second of the window, and whatever the
-- machine does meanwhile hits them alike. Without --mix the flat options are one variant.
local ffi = require("ffi")

-- clock_gettime(CLOCK_MONOTONIC) for per-step wall time: CLOCK_MONOTONIC is 1 on Linux
-- (/usr/include/linux/time.h; torvalds/linux include/uapi/linux/time.h).
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } cs_timespec;
int clock_gettime(int clk_id, cs_timespec *tp);
]]

local M = {}

-- Rows this thread saw committed (counted only after the statement/COMMIT returned), and
-- reads that missed the session's own write: printed once per thread at the end so the
-- driver can verify row counts and report stale reads.
M.committed = 0
M.stale = 0

local ts = ffi.new("cs_timespec")

function M.now()
   ffi.C.clock_gettime(1, ts)
   return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) * 1e-9
end

-- Latency buckets: floor(40 * ln(microseconds)), 2.5% wide; the driver reads quantiles.
local BUCKETS_PER_E = 40

-- The options every script takes besides its own.
function M.options(own)
   own.mix = {"variants to interleave: name;key=value;...|name;... (empty: the flat options)",
              ""}
   own.delay_us = {"calibration: busy-wait this many microseconds inside every timed step", 0}
   return own
end

local function parse_mix(spec)
   local out = {}
   for item in string.gmatch(spec, "[^|]+") do
      local v = {}
      for field in string.gmatch(item, "[^;]+") do
         if v.name == nil then
            v.name = field
         else
            local k, val = string.match(field, "^([%w_]+)=(.*)$")
            if k == nil then error("cs_common: bad --mix field '" .. field .. "'") end
            v[k] = tonumber(val) or val
         end
      end
      table.insert(out, v)
   end
   return out
end

-- The variants of this run, each a table whose missing keys fall back to the flat options.
function M.variants()
   local spec = sysbench.opt.mix
   local list = (spec ~= nil and spec ~= "") and parse_mix(spec) or {{name = ""}}
   for i, v in ipairs(list) do
      setmetatable(v, {__index = sysbench.opt})
      v.index = i
      v.steps, v.rows, v.attempted, v.stale, v.queries = 0, 0, 0, 0, 0
      v.time, v.delay = 0.0, 0.0
      v.hist = {}
   end
   return list
end

function M.connect()
   local drv = sysbench.sql.driver()
   local con = drv:connect()
   M.open = M.open or {}
   table.insert(M.open, con)
   return con
end

-- The identity the driver compares to route a connection (host:port:wsrep_node_name; the
-- name empty on MySQL, an NDB SQL node, which has no wsrep variables): target.py IDENTITY_SQL.
function M.identity(con)
   local rs = con:query("SELECT CONCAT(@@hostname, ':', @@port, ':')")
   local id = rs:fetch_row()[1]
   rs:free()
   rs = con:query("SHOW VARIABLES LIKE 'wsrep_node_name'")
   local row = rs:fetch_row()
   rs:free()
   return row and (id .. row[2]) or id
end

-- A connection to the node with this identity (empty: any). sysbench hands out hosts
-- round-robin across all threads' connections, so open a few and keep the extras for later
-- requests; threads that connect in lockstep would each see the same host every time
-- (thread A always even, B always odd): a random pause between attempts breaks the lockstep.
local spares = {}

function M.connect_to(want)
   for attempt = 1, 32 do
      for i, c in ipairs(spares) do
         if want == "" or c.id == want then
            table.remove(spares, i)
            return c.con
         end
      end
      if attempt > 1 then
         for _ = 1, sysbench.rand.uniform(1, 200000) do end
      end
      local con = M.connect()
      table.insert(spares, {con = con, id = M.identity(con)})
   end
   error("cs_common: could not get a connection to node " .. want)
end

function M.release_spares()
   for _, c in ipairs(spares) do
      for i, con in ipairs(M.open) do
         if con == c.con then table.remove(M.open, i) break end
      end
      c.con:disconnect()
   end
   spares = {}
end

-- The variant whose step runs now: its queries are counted.
local current = nil

function M.query(con, sql)
   if current ~= nil then current.queries = current.queries + 1 end
   local rs = con:query(sql)
   if rs ~= nil and type(rs) ~= "number" then rs:free() end
end

-- The first column of the first row (nil: no row), the query counted like M.query's.
function M.fetch(con, sql)
   if current ~= nil then current.queries = current.queries + 1 end
   local rs = con:query(sql)
   local row = rs:fetch_row()
   local value = row and row[1]
   rs:free()
   return value
end

-- Row accounting: `attempt` before a write is sent (it may land even if the reply is lost),
-- `commit` once it returned; the driver's row book is [committed, attempted].
function M.attempt(v, rows)
   v.attempted = v.attempted + rows
end

function M.commit(v, rows)
   v.rows = v.rows + rows
   M.committed = M.committed + rows
end

function M.stale_read(v)
   v.stale = v.stale + 1
   M.stale = M.stale + 1
end

local function spin(seconds)
   local t0 = M.now()
   local t = t0
   while t - t0 < seconds do t = M.now() end
   return t - t0
end

local function timed(step, v)
   current = v
   local t0 = M.now()
   step(v)
   if v.delay_us > 0 then
      -- The injected cost is measured, not assumed: a preempted spin lasts longer.
      v.delay = v.delay + spin(v.delay_us * 1e-6)
   end
   local dt = M.now() - t0
   current = nil
   v.steps = v.steps + 1
   v.time = v.time + dt
   local b = dt > 1e-6 and math.floor(BUCKETS_PER_E * math.log(dt * 1e6)) or 0
   v.hist[b] = (v.hist[b] or 0) + 1
end

function M.report()
   io.stdout:write(string.format("CSSTAT tid=%d committed=%d stale=%d\n",
                                 sysbench.tid, M.committed, M.stale))
   for _, v in ipairs(M.list or {}) do
      local h = {}
      for b, c in pairs(v.hist) do table.insert(h, b .. ":" .. c) end
      io.stdout:write(string.format(
         "CSVAR tid=%d name=%s steps=%d rows=%d attempted=%d stale=%d queries=%d"
            .. " time=%.6f delay=%.6f hist=%s\n",
         sysbench.tid, v.name, v.steps, v.rows, v.attempted, v.stale, v.queries, v.time,
         v.delay, table.concat(h, ",")))
   end
   io.stdout:flush()
end

-- Define sysbench's thread_init/event/thread_done from a script's parts:
-- init() opens what every variant shares, setup(v) prepares one variant, step(v) is one
-- event of it, done() closes what init opened.
function M.main(parts)
   function thread_init()
      M.list = M.variants()
      M.order = {}
      if parts.init then parts.init(M.list) end
      for i, v in ipairs(M.list) do
         if parts.setup then parts.setup(v, #M.list) end
         M.order[i] = v
      end
      M.release_spares()
   end

   function event()
      local order = M.order
      for i = #order, 2, -1 do  -- Fisher-Yates: a fresh random order every event
         local j = sysbench.rand.uniform(1, i)
         order[i], order[j] = order[j], order[i]
      end
      for i = 1, #order do timed(parts.step, order[i]) end
   end

   -- An ignored error aborts the event and sysbench runs it again (thread_run in
   -- akopytov/sysbench src/lua/internal/sysbench.lua, 1.0.20): roll back whatever the aborted
   -- step left open so that no later autocommit statement lands in its transaction.
   sysbench.hooks.before_restart_event = function()
      current = nil
      for _, con in ipairs(M.open or {}) do pcall(con.query, con, "ROLLBACK") end
   end

   function thread_done()
      M.report()
      if parts.done then parts.done(M.list) end
      for _, con in ipairs(M.open or {}) do pcall(con.disconnect, con) end
   end
end

return M
