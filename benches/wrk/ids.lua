-- The event IDs named by ALMANAC_BENCH_IDS (comma-separated), for the scripts that write to
-- existing events (patch_event.lua, delete_event.lua).

function event_ids()
   local ids = {}
   for id in (os.getenv("ALMANAC_BENCH_IDS") or ""):gmatch("%d+") do
      table.insert(ids, id)
   end
   return ids
end
