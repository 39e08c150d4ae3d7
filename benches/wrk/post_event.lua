-- POST /events with a JSON body: a unique title per request (thread number + counter), a
-- date in the generated calendar's range. The Authorization header (Basic) comes from the
-- command line (wrk -H), the path from the URL; ALMANAC_BENCH_CATEGORY (an existing category
-- ID, optional) is linked. Reports like report.lua.

local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(dir .. "report.lua")

local threads = {}
local counter = 0
local category = os.getenv("ALMANAC_BENCH_CATEGORY")
local categories = category and string.format(',"categories":[%s]', category) or ""

function setup(thread)
   thread:set("thread_number", #threads + 1)
   table.insert(threads, thread)
end

function init(args)
   wrk.method = "POST"
   wrk.headers["Content-Type"] = "application/json"
end

function request()
   counter = counter + 1
   local day = 1 + counter % 28
   local month = 1 + math.floor(counter / 28) % 12
   local body = string.format(
      '{"title":"Benchmark concert %d-%d","description":"Load test event number %d of thread %d.",'
         .. '"start_date":"2027-%02d-%02d 19:00:00","end_date":"2027-%02d-%02d 21:30:00",'
         .. '"status":"publish","cost":"10"%s}',
      thread_number or 0, counter, counter, thread_number or 0, month, day, month, day,
      categories)
   return wrk.format(nil, nil, nil, body)
end
