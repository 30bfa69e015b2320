-- Shared by the clusterscope loadgen scripts (sysbench 1.0.20, LuaJIT).
-- Credentials: the driver passes no password in argv; libmariadb reads MYSQL_PWD.
--
-- A script runs one or several variants ("the mix", --mix=name;key=value;...|name;...,
-- each variant's keys overriding the script's flat options), in one of two ways:
--
-- * interleaved (no --slots): every event runs one step of every variant, in a fresh
--   random order, and times each step on its own. The variants share every second of the
--   window: what it measures is a statement's latency in a load that mixes the variants.
-- * time-sliced (--slots=PLAN): the run is cut into slots of --slot_ms on a clock every
--   thread shares (--epoch, CLOCK_MONOTONIC seconds set by the driver), and in slot s every
--   thread runs only variant PLAN[s]: the whole load is of one variant at a time. A step
--   is charged to the slot it started in; it counts as measured when it also completes in
--   that slot, after the slot's first --washout_ms (completions in the washout and steps
--   that spill into the next slot are counted apart and left out).
--
-- Without --mix the flat options are one variant.
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

-- CPU this thread used (CLOCK_THREAD_CPUTIME_ID is 3 on Linux, include/uapi/linux/time.h):
-- the client's own share of a step (Lua, the driver, libmariadb), which on a shared host
-- competes with the servers and is added to both sides' latencies alike.
local cts = ffi.new("cs_timespec")

local function thread_cpu()
   ffi.C.clock_gettime(3, cts)
   return tonumber(cts.tv_sec) + tonumber(cts.tv_nsec) * 1e-9
end

-- Latency buckets: floor(40 * ln(microseconds)), 2.5% wide; the driver reads quantiles.
local BUCKETS_PER_E = 40

-- The options every script takes besides its own.
function M.options(own)
   own.mix = {"variants to interleave: name;key=value;...|name;... (empty: the flat options)",
              ""}
   own.delay_us = {"calibration: busy-wait this many microseconds inside every timed step", 0}
   own.slots = {"time-sliced plan: one digit per slot, the 1-based index of the --mix"
                   .. " variant that slot runs (empty: interleave every event)", ""}
   own.slot_ms = {"time-sliced: slot length in milliseconds", 2000}
   own.washout_ms = {"time-sliced: completions this long after a slot starts are left out",
                     500}
   own.epoch = {"time-sliced: CLOCK_MONOTONIC second at which slot 0 starts", "0"}
   own.curve_ms = {"time-sliced: also count completions per bin of this many ms after each"
                      .. " slot start (the relaxation curve; 0: off)", 0}
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
      v.time, v.delay, v.cpu = 0.0, 0.0, 0.0
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
   local c0 = thread_cpu()
   local t0 = M.now()
   step(v)
   if v.delay_us > 0 then
      -- The injected cost is measured, not assumed: a preempted spin lasts longer.
      v.delay = v.delay + spin(v.delay_us * 1e-6)
   end
   local t1 = M.now()
   local dt = t1 - t0
   v.cpu = v.cpu + (thread_cpu() - c0)
   current = nil
   v.steps = v.steps + 1
   v.time = v.time + dt
   local b = dt > 1e-6 and math.floor(BUCKETS_PER_E * math.log(dt * 1e6)) or 0
   v.hist[b] = (v.hist[b] or 0) + 1
   return t0, t1, b
end

-- The time-sliced plan, parsed once per thread (nil: interleaved).
local plan = nil

local function slot_record(s)
   local rec = plan.slots[s]
   if rec == nil then
      rec = {n = 0, wash = 0, spill = 0, time = 0.0, hist = {}, curve = {}}
      plan.slots[s] = rec
   end
   return rec
end

-- One event of the time-sliced design: a step of the variant whose slot it is now.
local function sliced_event(step)
   local t = M.now()
   local s = math.floor((t - plan.epoch) / plan.slot)
   if s >= #plan.order then
      -- The plan is done: a true return ends this thread's event loop (thread_run in
      -- akopytov/sysbench src/lua/internal/sysbench.lua, tag 1.0.20, ebf1c90d).
      plan.last = t
      return true
   end
   plan.first = plan.first or t
   -- Before slot 0 the threads warm up on every variant in turn: the lead's writes would
   -- otherwise all land in slot 0's table, and its table outgrow the others.
   local v = M.list[s < 0 and plan.lead % #M.list + 1 or plan.order[s + 1]]
   local t0, t1, b = timed(step, v)
   plan.last = t1
   if s < 0 then
      plan.lead = plan.lead + 1  -- before slot 0: the threads warm up, nothing is measured
      return
   end
   local rec = slot_record(s)
   local start = plan.epoch + s * plan.slot
   if t1 >= start + plan.slot then
      rec.spill = rec.spill + 1
   elseif t1 - start < plan.washout then
      rec.wash = rec.wash + 1
   else
      rec.n = rec.n + 1
      rec.time = rec.time + (t1 - t0)
      rec.hist[b] = (rec.hist[b] or 0) + 1
   end
   if plan.curve > 0 then
      -- completions by the slot they land in, whatever variant: the relaxation curve
      local sc = math.floor((t1 - plan.epoch) / plan.slot)
      if sc < #plan.order then
         local at = slot_record(sc)
         local bin = math.floor((t1 - plan.epoch - sc * plan.slot) / plan.curve)
         at.curve[bin] = (at.curve[bin] or 0) + 1
      end
   end
end

local function parse_plan()
   local spec = tostring(sysbench.opt.slots or "")
   if spec == "" then return nil end
   local order = {}
   for c in string.gmatch(spec, "%d") do
      local i = tonumber(c)
      if i < 1 or i > #M.list then
         error("cs_common: --slots names variant " .. c .. " of " .. #M.list)
      end
      table.insert(order, i)
   end
   return {order = order, slot = sysbench.opt.slot_ms / 1000.0,
           washout = sysbench.opt.washout_ms / 1000.0,
           epoch = tonumber(sysbench.opt.epoch), curve = sysbench.opt.curve_ms / 1000.0,
           slots = {}, lead = 0}
end

local function hist_text(hist)
   local h = {}
   for b, c in pairs(hist) do table.insert(h, b .. ":" .. c) end
   return table.concat(h, ",")
end

function M.report()
   io.stdout:write(string.format("CSSTAT tid=%d committed=%d stale=%d\n",
                                 sysbench.tid, M.committed, M.stale))
   for _, v in ipairs(M.list or {}) do
      io.stdout:write(string.format(
         "CSVAR tid=%d name=%s steps=%d rows=%d attempted=%d stale=%d queries=%d"
            .. " time=%.6f delay=%.6f hist=%s cpu=%.6f\n",
         sysbench.tid, v.name, v.steps, v.rows, v.attempted, v.stale, v.queries, v.time,
         v.delay, hist_text(v.hist), v.cpu))
   end
   if plan ~= nil then
      -- when this thread ran its first and last step: a slot counts only while every
      -- thread was running
      io.stdout:write(string.format("CSTHREAD tid=%d first=%.6f last=%.6f lead=%d\n",
                                    sysbench.tid, plan.first or -1, plan.last or -1,
                                    plan.lead))
      for s = 0, #plan.order - 1 do
         local rec = plan.slots[s]
         if rec ~= nil then
            local c = {}
            for bin, n in pairs(rec.curve) do table.insert(c, bin .. ":" .. n) end
            io.stdout:write(string.format(
               "CSSLOT tid=%d slot=%d n=%d wash=%d spill=%d time=%.6f hist=%s curve=%s\n",
               sysbench.tid, s, rec.n, rec.wash, rec.spill, rec.time, hist_text(rec.hist),
               table.concat(c, ",")))
         end
      end
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
      plan = parse_plan()
   end

   function event()
      if plan ~= nil then return sliced_event(parts.step) end
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
