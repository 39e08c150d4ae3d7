//! Answering lists and searches, and the lookups writes need (events carrying a term, records
//! due for publication).

use super::collectors::{values_in, DayCollector, DayHits, ValueCollector, DAY_SECONDS};
use super::filters::{ColumnBound, Plan};
use super::start_order;
use super::*;
use std::ops::Bound;

impl SearchIndex {
    /// The current view: the last index commit and the store snapshot it mirrors. Lists
    /// search it and read their page's records from its snapshot.
    pub(crate) fn view(&self, store: &Store) -> IndexResult<View> {
        let live = self.live();
        let view = live.view.read().expect("view lock").clone();
        match view {
            Some(view) => Ok(view),
            // Not reached once the index is open (opening sets the view); a fresh snapshot
            // is the best stand-in.
            None => {
                let rx = store.read()?;
                Ok(View {
                    searcher: live.current(),
                    head: rx.outbox_head()?,
                    store: Arc::new(rx),
                })
            }
        }
    }

    /// Events carrying a term or linking a venue/organizer (any status, any language): the
    /// events a term deletion or a venue/organizer trashing must update.
    pub(crate) fn events_carrying(&self, kind: Kind, id: u64) -> IndexResult<Vec<u64>> {
        let f = &self.fields;
        let key = match kind {
            Kind::Category => Key::Category,
            Kind::Tag => Key::Tag,
            Kind::Venue => Key::Venue,
            _ => Key::Organizer,
        };
        let query = tantivy::query::TermQuery::new(
            f.key(key, id),
            tantivy::schema::IndexRecordOption::Basic,
        );
        Ok(self.collect_values(&query, "id")?.into_iter().collect())
    }

    /// Records stored as `future` whose publication time (UTC seconds) has come.
    pub(crate) fn scheduled_before(&self, now: i64) -> IndexResult<Vec<u64>> {
        let query = planner::stored_future_until(&self.fields, now);
        Ok(self
            .collect_values(query.as_ref(), "id")?
            .into_iter()
            .collect())
    }

    /// Whether any record is stored as `future` (scheduled), so that "published" must also
    /// look at publication dates. Kept per snapshot generation: every list and every term
    /// count asks, and the term's frequency is a lookup in each segment.
    pub(crate) fn any_scheduled(&self) -> bool {
        let live = self.live();
        let searcher = live.current();
        let generation = searcher.generation();
        let known = live.scheduled.load(Ordering::Relaxed);
        if known != UNKNOWN_SCHEDULED && known >> 1 == generation {
            return known & 1 == 1;
        }
        let term = self
            .fields
            .key(Key::Status, crate::model::Status::Future.as_str());
        let any = tantivy::query::Bm25StatisticsProvider::doc_freq(&searcher, &term)
            .map(|n| n > 0)
            .unwrap_or(true);
        live.scheduled
            .store(generation << 1 | u64::from(any), Ordering::Relaxed);
        any
    }

    /// A page of `GET /events` and its total.
    pub(crate) fn events(
        &self,
        view: &View,
        filter: &EventFilter,
        order: EventOrder,
        relevance: bool,
        offset: usize,
        limit: usize,
    ) -> IndexResult<Hits> {
        let query = self.events_query(view, filter)?;
        if !relevance && order == EventOrder::Start && (offset as u64) < view.searcher.num_docs() {
            let (field, prefix) = self.fields.key_terms(Key::StartMonth);
            let months = start_order::MonthTerms { field, prefix };
            let page = start_order::page(&query, &months, &view.searcher, offset, limit.max(1))?;
            if let Some(hits) = page {
                return Ok(hits);
            }
        }
        let (key_field, ascending) = match order {
            EventOrder::Start => ("order_start", true),
            EventOrder::Publication => ("order_date", true),
            EventOrder::LastChange => ("order_modified", false),
        };
        self.page(
            &view.searcher,
            &query,
            key_field,
            ascending,
            relevance,
            offset,
            limit,
        )
    }

    /// The events of `filter` on each of `days` days from `first` (a day's start, as
    /// wall-clock seconds), counted, with the first `per_day` of each in start order: one pass
    /// over the window's matches, however many days and events.
    pub(crate) fn days(
        &self,
        view: &View,
        filter: &EventFilter,
        first: i64,
        days: usize,
        per_day: usize,
    ) -> IndexResult<DayHits> {
        let live = self.live();
        let mut plan = self.events_plan(&live, view, filter)?;
        // The collector puts each event on the days it covers and leaves out those on none of
        // them: the window's own bounds would only read the same columns once more.
        let end = first.saturating_add(DAY_SECONDS.saturating_mul(days as i64));
        let window = [
            ColumnBound {
                column: "end_local",
                lower: Bound::Excluded(first),
                upper: Bound::Unbounded,
            },
            ColumnBound {
                column: "start_local",
                lower: Bound::Unbounded,
                upper: Bound::Excluded(end),
            },
        ];
        plan.bounds.retain(|bound| !window.contains(bound));
        let collector = DayCollector {
            first,
            days,
            per_day,
            columns: live.filter_cache.clone(),
        };
        Ok(view
            .searcher
            .search(&plan.into_query(&live.filter_cache), &collector)?)
    }

    /// The query of an event filter in the view's index state.
    fn events_query(
        &self,
        view: &View,
        filter: &EventFilter,
    ) -> IndexResult<super::filters::FilteredQuery> {
        let live = self.live();
        Ok(self
            .events_plan(&live, view, filter)?
            .into_query(&live.filter_cache))
    }

    /// The plan of an event filter in the view's index state (a radius resolved to its
    /// venues).
    fn events_plan(&self, live: &Live, view: &View, filter: &EventFilter) -> IndexResult<Plan> {
        let radius_venues = match filter.geo {
            Some(planner::GeoFilter::Within {
                lat,
                lng,
                radius_km,
            }) => self.venues_within(live, view, lat, lng, radius_km)?,
            _ => Arc::new(Vec::new()),
        };
        Ok(planner::events(&self.fields, filter, &radius_venues))
    }

    /// The IDs of the venues within the radius in the view's index state.
    fn venues_within(
        &self,
        live: &Live,
        view: &View,
        lat: f64,
        lng: f64,
        radius_km: f64,
    ) -> IndexResult<Arc<Vec<u64>>> {
        let generation = view.searcher.generation();
        let key = [lat.to_bits(), lng.to_bits(), radius_km.to_bits()];
        {
            let kept = live.radius_venues.lock().expect("radius venues lock");
            if kept.generation == generation {
                if let Some(found) = kept.found.get(&key) {
                    return Ok(found.clone());
                }
            }
        }
        let venues = planner::venues_within(&self.fields, lat, lng, radius_km)
            .into_query(&live.filter_cache);
        let ids = view
            .searcher
            .search(&venues, &ValueCollector { field: "id" })?;
        let mut ids: Vec<u64> = ids.into_iter().collect();
        ids.sort_unstable();
        let found = Arc::new(ids);
        let mut kept = live.radius_venues.lock().expect("radius venues lock");
        if kept.generation != generation || kept.found.len() >= RADIUS_FILTERS_KEPT {
            kept.generation = generation;
            kept.found.clear();
        }
        kept.found.insert(key, found.clone());
        Ok(found)
    }

    /// A page of `GET /venues` or `GET /organizers` (newest first) and its total.
    pub(crate) fn linked(
        &self,
        view: &View,
        filter: &LinkedFilter,
        relevance: bool,
        offset: usize,
        limit: usize,
    ) -> IndexResult<Hits> {
        let query = planner::linked(&self.fields, filter).into_query(&self.live().filter_cache);
        self.page(
            &view.searcher,
            &query,
            "order_date",
            false,
            relevance,
            offset,
            limit,
        )
    }

    /// How many venues or organizers match a filter.
    pub(crate) fn linked_count(&self, view: &View, filter: &LinkedFilter) -> IndexResult<usize> {
        let query = planner::linked(&self.fields, filter).into_query(&self.live().filter_cache);
        Ok(view.searcher.search(&query, &Count)?)
    }

    /// One page in the order of a sort-key field (see `docs::sort_key`), ascending or
    /// descending, optionally by relevance first; the total comes from the same search.
    /// Without relevance nothing is scored: the top-k collector reads only the sort key.
    #[allow(clippy::too_many_arguments)]
    fn page(
        &self,
        searcher: &Snapshot,
        query: &dyn Query,
        key_field: &'static str,
        ascending: bool,
        relevance: bool,
        offset: usize,
        limit: usize,
    ) -> IndexResult<Hits> {
        let limit = limit.max(1);
        // A page that starts past every document of the index is empty whatever the query.
        // Only the total is needed then; tantivy would size its top-k buffer by
        // `offset + limit` (and overflow on a huge `page`), so a client could make it
        // allocate without bound or panic.
        if offset as u64 >= searcher.num_docs() {
            let total = searcher.search(query, &Count)?;
            return Ok(Hits {
                ids: Vec::new(),
                total,
            });
        }
        let id_of = |key: i64| key.rem_euclid(docs::ID_SPAN) as u64;
        if !relevance {
            let order = if ascending { Order::Asc } else { Order::Desc };
            let top = TopDocs::with_limit(limit)
                .and_offset(offset)
                .order_by_fast_field::<i64>(key_field, order);
            let (total, hits) = searcher.search(query, &(Count, top))?;
            return Ok(Hits {
                ids: hits.into_iter().filter_map(|(k, _)| k.map(id_of)).collect(),
                total,
            });
        }
        let sign: i64 = if ascending { -1 } else { 1 };
        let top = TopDocs::with_limit(limit).and_offset(offset).tweak_score(
            move |segment: &SegmentReader| {
                let keys = segment
                    .fast_fields()
                    .i64(key_field)
                    .ok()
                    .map(|c| c.first_or_default_col(0));
                move |doc: DocId, score: Score| {
                    let key = keys.as_ref().map(|c| c.get_val(doc)).unwrap_or(0);
                    (score, sign * key, key)
                }
            },
        );
        let (total, hits) = searcher.search(query, &(Count, top))?;
        Ok(Hits {
            ids: hits
                .into_iter()
                .map(|((_, _, key), _)| id_of(key))
                .collect(),
            total,
        })
    }

    /// Every value of a u64 fast field over the documents matching `query`.
    pub(crate) fn collect_values(
        &self,
        query: &dyn Query,
        field: &'static str,
    ) -> IndexResult<HashSet<u64>> {
        values_in(&self.live(), query, field)
    }

    /// Published events per term (the terms' `count`) for the given term IDs: one count
    /// per term, from the cached filter bitsets of the term and of published events (see
    /// [`planner::published_events_with`]), so the cost follows the terms asked for and, after
    /// a write, the new segment.
    ///
    /// Every event representation embeds its terms with their counts, and counting a popular
    /// term still means visiting every event carrying it; so the last index commit's counts are
    /// kept until the next commit, and the overlay's change is added to them. While scheduled
    /// records exist a count also depends on `now` (a due `future` event counts as published)
    /// and is not kept.
    pub(crate) fn term_counts(
        &self,
        kind: Kind,
        ids: &[u64],
        now: i64,
    ) -> IndexResult<HashMap<u64, u64>> {
        let live = self.live();
        let searcher = live.current();
        let key = if kind == Kind::Category {
            Key::Category
        } else {
            Key::Tag
        };
        let any_scheduled = self.any_scheduled();
        let query_of = |id: u64| {
            planner::published_events_with(&self.fields, key, id, now, any_scheduled)
                .into_query(&live.filter_cache)
        };
        let mut counts = HashMap::with_capacity(ids.len());
        if any_scheduled {
            // Matches depend on the clock: nothing is kept.
            for id in ids {
                let count = searcher.search(&query_of(*id), &Count)? as u64;
                counts.insert(*id, count);
            }
            return Ok(counts);
        }
        // A count is kept for the snapshot it was counted in, and its part in the last index
        // commit until the next commit: after a write, only the overlay's change to it is
        // counted (a handful of documents).
        let (commit, generation) = (searcher.committed_generation(), searcher.generation());
        let mut in_commit = Vec::new();
        let mut missing = Vec::new();
        {
            let mut kept = live.term_counts.lock().expect("term count lock");
            kept.start(commit, generation);
            for id in ids {
                if let Some(count) = kept.current.get(&(kind, *id)) {
                    counts.insert(*id, *count);
                } else if let Some(count) = kept.committed.get(&(kind, *id)) {
                    in_commit.push((*id, *count));
                } else {
                    missing.push(*id);
                }
            }
        }
        // Counted without the lock: concurrent lists after a commit count side by side
        // instead of one after another.
        let mut counted = Vec::with_capacity(missing.len());
        for id in missing {
            let count = searcher.count_committed(&query_of(id))?;
            counted.push((id, count));
            in_commit.push((id, count));
        }
        let mut current = Vec::with_capacity(in_commit.len());
        for (id, count) in in_commit {
            let count = count.saturating_add_signed(searcher.overlay_count_change(&query_of(id))?);
            counts.insert(id, count);
            current.push(((kind, id), count));
        }
        let mut kept = live.term_counts.lock().expect("term count lock");
        if kept.commit == commit {
            kept.committed
                .extend(counted.into_iter().map(|(id, count)| ((kind, id), count)));
        }
        if kept.generation == generation {
            kept.current.extend(current);
        }
        Ok(counts)
    }
}
