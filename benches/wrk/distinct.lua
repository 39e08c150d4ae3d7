-- GET of a list or calendar feed the server has not kept: every request spells its start_date
-- with another time of day (which a window snaps to its day, so the answer stays the same), so
-- each one is a new request for the response and feed caches and is built afresh. The day comes
-- from ALMANAC_BENCH_DAY (YYYY-MM-DD), the rest of the query from the URL; requests also take
-- turns over ALMANAC_BENCH_VARIANTS ("|"-separated query parameters such as "page=2" or
-- "search=jazz", optional). Reports like report.lua.

local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(dir .. "report.lua")

local threads = {}
local counter = 0
local day = os.getenv("ALMANAC_BENCH_DAY")
local variants = {}
for variant in (os.getenv("ALMANAC_BENCH_VARIANTS") or ""):gmatch("[^|]+") do
   table.insert(variants, "&" .. variant)
end
if #variants == 0 then
   variants = { "" }
end

function setup(thread)
   thread:set("thread_number", #threads + 1)
   table.insert(threads, thread)
end

function request()
   counter = counter + 1
   -- Threads take turns over the seconds of the day, so no two requests are the same.
   local second = ((counter * 8) + (thread_number or 0)) % 86400
   local separator = wrk.path:find("?", 1, true) and "&" or "?"
   local path = string.format("%s%sstart_date=%s+%02d:%02d:%02d%s", wrk.path, separator, day,
      math.floor(second / 3600), math.floor(second / 60) % 60, second % 60,
      variants[1 + counter % #variants])
   return wrk.format(nil, path)
end
