-- DELETE /events/{id} (to the trash), each event of a set once: the event IDs come from
-- ALMANAC_BENCH_IDS (comma-separated), the Authorization header (Basic) from the command line
-- (wrk -H), the path of the events collection from the URL. Threads take the IDs in turn; a
-- run that needs more IDs than the set has sends its last ones again (answered 410). Reports
-- like report.lua.

local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(dir .. "report.lua")
dofile(dir .. "ids.lua")

local threads = {}
local counter = 0
local ids = event_ids()

function setup(thread)
   thread:set("thread_number", #threads + 1)
   thread:set("thread_count", 0)
   table.insert(threads, thread)
   for _, t in ipairs(threads) do
      t:set("thread_count", #threads)
   end
end

function init(args)
   if #ids == 0 then
      error("ALMANAC_BENCH_IDS names no event")
   end
   wrk.method = "DELETE"
end

function request()
   counter = counter + 1
   local at = (counter - 1) * math.max(thread_count or 1, 1) + (thread_number or 1)
   local id = ids[math.min(at, #ids)]
   return wrk.format(nil, wrk.path .. "/" .. id)
end
