-- PATCH /events/{id} with a JSON body that changes only the title: a new title per request
-- (thread number + counter), for the events of a fixed set taken in turn. The event IDs come
-- from ALMANAC_BENCH_IDS (comma-separated), the Authorization header (Basic) from the command
-- line (wrk -H), the path of the events collection from the URL. Reports like report.lua.

local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(dir .. "report.lua")
dofile(dir .. "ids.lua")

local threads = {}
local counter = 0
local ids = event_ids()

function setup(thread)
   thread:set("thread_number", #threads + 1)
   table.insert(threads, thread)
end

function init(args)
   if #ids == 0 then
      error("ALMANAC_BENCH_IDS names no event")
   end
   wrk.method = "PATCH"
   wrk.headers["Content-Type"] = "application/json"
end

function request()
   counter = counter + 1
   local id = ids[1 + (counter + (thread_number or 0)) % #ids]
   local body = string.format('{"title":"Benchmark update %d-%d"}', thread_number or 0, counter)
   return wrk.format(nil, wrk.path .. "/" .. id, nil, body)
end
