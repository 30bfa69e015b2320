-- A test script for the loadgen's Lua framework with no database: each step sleeps a
-- known time, so the throughput every variant reaches alone is known in advance.
-- step_us: the step's length; after_switch_us and transient_ms: for that long after this
-- thread's variant changed, every step lasts after_switch_us instead (what a switch
-- leaves behind: the washout must leave it out).
local ffi = require("ffi")
local cs = require("cs_common")

ffi.cdef[[int usleep(unsigned int usec);]]

sysbench.cmdline.options = cs.options({
   step_us = {"microseconds each step sleeps", 1000},
   after_switch_us = {"microseconds a step lasts shortly after a switch (0: step_us)", 0},
   transient_ms = {"how long after a switch steps last after_switch_us", 0},
})

local last_variant, switched = nil, 0

cs.main({
   step = function(v)
      local t0 = cs.now()
      if v.name ~= last_variant then
         last_variant, switched = v.name, t0
      end
      local us = v.step_us
      if v.after_switch_us > 0 and (t0 - switched) * 1000 < v.transient_ms then
         us = v.after_switch_us
      end
      ffi.C.usleep(us)
   end,
})
