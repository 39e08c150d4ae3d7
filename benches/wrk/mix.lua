-- GETs of several paths in turn: ALMANAC_BENCH_PATHS holds them, separated by spaces, each
-- appended to the URL's path (so the URL names the namespace). Reports like report.lua.

local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(dir .. "report.lua")

local paths = {}
local counter = 0

function init(args)
   for p in string.gmatch(os.getenv("ALMANAC_BENCH_PATHS") or "", "%S+") do
      table.insert(paths, wrk.path .. p)
   end
   if #paths == 0 then
      table.insert(paths, wrk.path)
   end
end

function request()
   counter = counter + 1
   return wrk.format(nil, paths[(counter % #paths) + 1])
end
