# Writes an iCalendar feed of N events (default 10,000) for the "Copying an iCalendar feed"
# figures of docs/performance.md: every tenth a weekly series of eight dates, fifty venues
# and ten categories, in Europe/Lisbon.
import datetime, sys
n = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
out = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//bench//EN", "X-WR-TIMEZONE:Europe/Lisbon"]
start = datetime.datetime(2027, 1, 4, 9, 0)
for i in range(n):
    t = start + datetime.timedelta(hours=7 * i)
    out += ["BEGIN:VEVENT", f"UID:event-{i}@bench.example", "DTSTAMP:20270101T000000Z",
            f"DTSTART;TZID=Europe/Lisbon:{t:%Y%m%dT%H%M%S}",
            f"DTEND;TZID=Europe/Lisbon:{t + datetime.timedelta(hours=2):%Y%m%dT%H%M%S}",
            f"SUMMARY:Event {i}", f"DESCRIPTION:About event {i}.\\n\\nMore.",
            f"LOCATION:Venue {i % 50}", f"CATEGORIES:Category {i % 10}"]
    if i % 10 == 0:
        out.append("RRULE:FREQ=WEEKLY;COUNT=8")
    out.append("END:VEVENT")
out.append("END:VCALENDAR")
sys.stdout.write("\r\n".join(out) + "\r\n")
