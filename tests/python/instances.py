# Reads an iCalendar feed on stdin as Python's icalendar and recurring-ical-events (the
# libraries of Python calendar tools) read it, and prints each event's instances as JSON:
# {"UID": ["YYYY-MM-DD HH:MM:SS" (UTC start) or "YYYY-MM-DD" (a date), ...], ...}, as
# ../browser/instances.mjs does with ICAL.js. Zones are the IANA zones the TZIDs name, as
# icalendar resolves them (zoneinfo), not the feed's VTIMEZONE components, which ICAL.js
# reads. Instances are expanded up to the `until` argument (UTC, ISO 8601): those whose
# RECURRENCE-ID (the start the rule gave them) is not later, as ICAL.js's iterator stops.
import json
import sys
from datetime import datetime, timedelta, timezone

import icalendar
import recurring_ical_events


def instant(t):
    """A DATE or DATE-TIME as a UTC instant (a date at its midnight, a floating time as UTC,
    as ICAL.js compares them)."""
    if not isinstance(t, datetime):
        t = datetime(t.year, t.month, t.day)
    if t.tzinfo is None:
        return t.replace(tzinfo=timezone.utc)
    return t.astimezone(timezone.utc)


def show(t):
    if not isinstance(t, datetime):
        return t.isoformat()
    t = instant(t)
    return f"{t.year}-{t.month:02}-{t.day:02} {t.hour:02}:{t.minute:02}:{t.second:02}"


until = instant(datetime.fromisoformat((sys.argv[1:] or ["2100-01-01T00:00:00"])[0].rstrip("Z")))
calendar = icalendar.Calendar.from_ical(sys.stdin.buffer.read())
events = calendar.walk("VEVENT")
masters = [e for e in events if "RECURRENCE-ID" not in e]
for exception in events:
    if "RECURRENCE-ID" in exception and not any(m["UID"] == exception["UID"] for m in masters):
        sys.exit(f"an exception without its series: {exception['UID']}")
# The library's window holds every instance whose start the rule gave up to `until`: from the
# first start in the feed to past the last of `until` and the exceptions' (moved) starts.
starts = [instant(e["DTSTART"].dt) for e in events]
span = (
    min(starts + [until]) - timedelta(days=2),
    max(starts + [until]) + timedelta(days=2),
)
# Exceptions (RECURRENCE-ID) replace their instance of the series with the same UID.
found = {}
for occurrence in recurring_ical_events.of(calendar).between(*span):
    recurrence_id = occurrence["RECURRENCE-ID"].dt
    if instant(recurrence_id) <= until:
        found.setdefault(str(occurrence["UID"]), []).append((instant(recurrence_id), occurrence))
out = {}
for event in masters:
    uid = str(event["UID"])
    if "RRULE" in event or "RDATE" in event:
        # In the order of the rule's starts, as ICAL.js's iterator gives them.
        instances = sorted(found.get(uid, []), key=lambda pair: pair[0])
        out[uid] = [show(o["DTSTART"].dt) for _, o in instances][:5001]
    else:
        # Without RRULE or RDATE: its start, whatever `until`, as ICAL.js gives it.
        out[uid] = [show(event["DTSTART"].dt)]
sys.stdout.write(json.dumps(out, ensure_ascii=False, separators=(",", ":")))
