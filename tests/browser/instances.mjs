// Reads an iCalendar feed on stdin as Mozilla's ICAL.js (the library Thunderbird's calendar
// is built on) reads it, and prints each event's instances as JSON:
// {"UID": ["YYYY-MM-DD HH:MM:SS" (UTC start), ...], ...}. Zones come from the feed's own
// VTIMEZONE components. Instances are expanded up to the `until` argument (UTC, ISO 8601).
import ICAL from 'ical.js';
import { readFileSync } from 'node:fs';

const until = ICAL.Time.fromDateTimeString(process.argv[2] ?? '2100-01-01T00:00:00');
until.zone = ICAL.Timezone.utcTimezone;
const calendar = new ICAL.Component(ICAL.parse(readFileSync(0, 'utf8')));
for (const zone of calendar.getAllSubcomponents('vtimezone')) {
  ICAL.TimezoneService.register(zone);
}
const pad = (n) => String(n).padStart(2, '0');
const utc = (time) => {
  const t = time.convertToZone(ICAL.Timezone.utcTimezone);
  return `${t.year}-${pad(t.month)}-${pad(t.day)} ${pad(t.hour)}:${pad(t.minute)}:${pad(t.second)}`;
};
const out = {};
const events = calendar.getAllSubcomponents('vevent').map((c) => new ICAL.Event(c));
const masters = events.filter((e) => !e.isRecurrenceException());
// Exceptions (RECURRENCE-ID) replace their instance of the series with the same UID, as
// Thunderbird relates them.
for (const exception of events.filter((e) => e.isRecurrenceException())) {
  const master = masters.find((m) => m.uid === exception.uid);
  if (!master) throw new Error(`an exception without its series: ${exception.uid}`);
  master.relateException(exception);
}
for (const event of masters) {
  const starts = [];
  if (event.isRecurring()) {
    const iterator = event.iterator();
    for (let next = iterator.next(); next && next.compare(until) <= 0; next = iterator.next()) {
      const start = event.getOccurrenceDetails(next).startDate;
      starts.push(start.isDate ? start.toString().slice(0, 10) : utc(start));
      if (starts.length > 5000) break;
    }
  } else {
    starts.push(event.startDate.isDate ? event.startDate.toString() : utc(event.startDate));
  }
  out[event.uid] = starts;
}
process.stdout.write(JSON.stringify(out));
