-- GET of a calendar feed the server has not kept: every request names the same window with
-- another time of day in start_date (which a window snaps to its day), so each one is a new
-- request for the feed cache and the feed is built afresh. The day comes from
-- ALMANAC_BENCH_DAY (YYYY-MM-DD), the rest of the query from the URL. Reports like report.lua.

local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(dir .. "report.lua")

local threads = {}
local counter = 0
local day = os.getenv("ALMANAC_BENCH_DAY")

function setup(thread)
   thread:set("thread_number", #threads + 1)
   table.insert(threads, thread)
end

function request()
   counter = counter + 1
   -- Threads take turns over the seconds of the day, so no two requests are the same.
   local second = ((counter * 8) + (thread_number or 0)) % 86400
   local path = string.format("%s&start_date=%s+%02d:%02d:%02d", wrk.path, day,
      math.floor(second / 3600), math.floor(second / 60) % 60, second % 60)
   return wrk.format(nil, path)
end
