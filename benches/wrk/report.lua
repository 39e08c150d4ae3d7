-- wrk reporting hook shared by the runs of benches/http_load.rs and benches/write_cost.rs: after
--   ALMANAC_BENCH {"requests":..,"duration_us":..,"rps":..,"p50_us":..,...}
-- with latency percentiles in microseconds, so the benchmark can parse it.
-- Non-2xx/3xx answers count as "status_errors" (wrk's summary.errors.status).

function done(summary, latency, requests)
   local e = summary.errors
   local seconds = summary.duration / 1e6
   io.write(string.format(
      'ALMANAC_BENCH {"requests":%d,"duration_us":%d,"rps":%.1f,'
         .. '"p50_us":%d,"p95_us":%d,"p99_us":%d,"mean_us":%.1f,"max_us":%d,'
         .. '"bytes":%d,"connect_errors":%d,"read_errors":%d,"write_errors":%d,'
         .. '"timeouts":%d,"status_errors":%d}\n',
      summary.requests, summary.duration, summary.requests / seconds,
      latency:percentile(50), latency:percentile(95), latency:percentile(99),
      latency.mean, latency.max, summary.bytes,
      e.connect, e.read, e.write, e.timeout, e.status))
end
