//! Opening the index, building it from the store, and rebuilding it offline or while serving.

use super::apply::Commit;
use super::merge_policy::live_merge_policy;
use super::*;

/// Memory for the index writer's buffers.
const WRITER_MEMORY: usize = 64 * 1024 * 1024;

/// Indexing threads of the serving index's writer. One: a commit turns what each thread
/// holds into a segment of its own, and every segment (and every merge) pays a fixed cost
/// per field (term dictionary builders, fast-field writers), so a batch of a few writes spread
/// over two threads cost two segments. Full builds use tantivy's default (one per CPU).
const LIVE_WRITER_THREADS: usize = 1;

/// Memory for cached filter bitsets: one bit per document per filter and segment, so 125 KB
/// per filter at a million documents, about 500 filters.
const FILTER_CACHE_BYTES: usize = 64 * 1024 * 1024;

impl Live {
    pub(super) fn open(dir: &Path, parsed: &IndexSchema) -> IndexResult<Live> {
        std::fs::create_dir_all(dir)?;
        let directory =
            directory::IndexDirectory::open(dir).map_err(tantivy::TantivyError::from)?;
        let index = open_in(directory.clone(), parsed)?;
        // From here on files are written without being synced.
        directory::unmark_clean(dir)?;
        // A commit cut short (the process killed between writing a segment's files and
        // publishing them in meta.json) leaves orphan files behind, and the catch-up commit
        // can want one of the same names: tantivy then refuses to overwrite, e.g.
        // `FileAlreadyExists("<segment>.286.del")`, and the server could never start again.
        // Removing what meta.json does not reference first makes every restart after a kill
        // start from a clean directory (tantivy's own collection only knows the files on its
        // list, which is not synced: see `directory`).
        directory::remove_unlisted(&index, dir)?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        // Created on a thread of the writers' priority, which the writer's merge and
        // segment-updater threads inherit.
        let writer: IndexWriter = std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    crate::priority::yield_to_readers();
                    index.writer_with_num_threads(LIVE_WRITER_THREADS, WRITER_MEMORY)
                })
                .join()
                .expect("creating the index writer does not panic")
        })?;
        writer.set_merge_policy(Box::new(live_merge_policy()));
        // Drops the files just removed from tantivy's list of managed files.
        writer.garbage_collect_files().wait()?;
        Ok(Live {
            directory,
            reader,
            writer: Mutex::new(writer),
            overlay: Mutex::default(),
            generation: AtomicU64::new(0),
            view: RwLock::new(None),
            term_counts: Mutex::new(TermCounts::default()),
            radius_venues: Mutex::new(RadiusVenues::default()),
            scheduled: AtomicU64::new(UNKNOWN_SCHEDULED),
            filter_cache: Arc::new(filters::FilterCache::new(FILTER_CACHE_BYTES)),
        })
    }

    pub(super) fn set_view(&self, store: ReadTx, head: u64, searcher: Snapshot) {
        let view = Some(View {
            searcher,
            store: Arc::new(store),
            head,
        });
        let replaced = std::mem::replace(&mut *self.view.write().expect("view lock"), view);
        // Dropped after the lock: the last holder of the old view closes its store snapshot.
        drop(replaced);
    }

    /// What a read searches with `overlay` on top of the last commit.
    pub(super) fn snapshot(&self, overlay: &overlay::Overlay) -> Snapshot {
        Snapshot::new(
            self.reader.searcher(),
            overlay.segment(),
            overlay.hidden(),
            self.generation.load(Ordering::SeqCst),
        )
    }

    /// The newest snapshot (the last commit's alone before the first view).
    pub(super) fn current(&self) -> Snapshot {
        match &*self.view.read().expect("view lock") {
            Some(view) => view.searcher.clone(),
            None => self.snapshot(&overlay::Overlay::default()),
        }
    }

    /// Marks a change of what reads search (a commit, a rebuilt overlay): caches of counts
    /// derived from it start over.
    pub(super) fn changed(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    pub(super) fn applied_seq(&self) -> u64 {
        let metas = self.reader.searcher().index().load_metas().ok();
        metas
            .and_then(|m| m.payload)
            .and_then(|p| serde_json::from_str::<CommitPayload>(&p).ok())
            .map(|p| p.seq)
            .unwrap_or(0)
    }
}

fn open_in(
    directory: impl tantivy::directory::Directory,
    parsed: &IndexSchema,
) -> IndexResult<Index> {
    let index = Index::open_or_create(directory, parsed.schema.clone())?;
    analysis::register(index.tokenizers());
    Ok(index)
}

impl SearchIndex {
    /// Makes every index file written so far durable: the outbox entries the index has
    /// applied may be pruned after it (see `directory`).
    pub(crate) fn checkpoint(&self) -> IndexResult<()> {
        Ok(self.live().directory.sync()?)
    }

    /// Ends a run: a checkpoint, then the mark that spares the next start its checks.
    pub(crate) fn close(&self) -> IndexResult<()> {
        self.checkpoint()?;
        Ok(directory::mark_clean(&self.dir)?)
    }

    /// Opens the index in `dir` and brings it up to date with the store: rebuilt from scratch
    /// when missing, unreadable or of another schema version, else caught up from the outbox.
    pub fn open(dir: &Path, store: &Store) -> IndexResult<SearchIndex> {
        let parsed = IndexSchema::load()?;
        let usable = match Self::payload_in(dir) {
            Some(p) => p.schema == parsed.version,
            None => false,
        };
        // After a run that did not end with a checkpoint (a crash, a power loss), files the
        // index references may be missing or damaged: check them before trusting it.
        let clean = directory::is_clean(dir);
        let usable = usable
            && (clean
                || match Index::open_in_dir(dir)
                    .map_err(|e| e.to_string())
                    .and_then(|i| directory::verify(&i))
                {
                    Ok(()) => true,
                    Err(e) => {
                        tracing::warn!(error = %e, "search index damaged; rebuilding it");
                        false
                    }
                });
        if !usable {
            tracing::info!(dir = %dir.display(), "building the search index from the store");
            Self::rebuild(dir, store, |_| {})?;
        }
        let live = match Live::open(dir, &parsed) {
            Ok(live) => live,
            Err(e) => {
                tracing::warn!(error = %e, "search index unreadable; rebuilding it");
                Self::rebuild(dir, store, |_| {})?;
                Live::open(dir, &parsed)?
            }
        };
        let search = SearchIndex {
            dir: dir.to_path_buf(),
            live: RwLock::new(Arc::new(live)),
            apply_lock: Mutex::new(()),
            rebuilding: AtomicBool::new(false),
            applied: AtomicU64::new(0),
            changes: RwLock::default(),
            fields: parsed.fields,
            schema_version: parsed.version,
        };
        let applied = search.applied_seq();
        if applied > store.outbox_head()? {
            // A cluster replica lost its last local commits to a crash after the index had
            // applied them; the log gives them again, and they must reach the index.
            tracing::warn!(
                applied,
                "the search index is ahead of the replica; the writes it lost come again from the cluster log"
            );
            store.draw_outbox_after(applied)?;
        }
        if let Some(last) = search.apply_after(store, applied, Commit::Now)? {
            tracing::info!(
                entries = last - applied,
                "caught the search index up with the store"
            );
            search.checkpoint()?;
            store.prune_outbox(last)?;
        }
        Ok(search)
    }

    /// The commit payload of the index in `dir`, if it has a readable one.
    fn payload_in(dir: &Path) -> Option<CommitPayload> {
        let index = Index::open_in_dir(dir).ok()?;
        let metas = index.load_metas().ok()?;
        serde_json::from_str(metas.payload.as_deref()?).ok()
    }

    /// Builds a fresh index of every record into a sibling directory and swaps it in place of
    /// `dir` (rename, so that a crash leaves either the old or the new index, never a mix).
    /// `progress` is told the number of records indexed so far.
    pub fn rebuild(
        dir: &Path,
        store: &Store,
        progress: impl FnMut(u64),
    ) -> IndexResult<BuildSummary> {
        let building = sibling(dir, "building");
        let (summary, _) = Self::build_into(&building, store, progress)?;
        swap_in(&building, dir)?;
        Ok(summary)
    }

    /// Indexes every record of a store snapshot into `building` (emptied first); returns the
    /// counts and the outbox sequence number the snapshot includes.
    fn build_into(
        building: &Path,
        store: &Store,
        mut progress: impl FnMut(u64),
    ) -> IndexResult<(BuildSummary, u64)> {
        let parsed = IndexSchema::load()?;
        if building.exists() {
            std::fs::remove_dir_all(building)?;
        }
        std::fs::create_dir_all(building)?;
        let directory = tantivy::directory::MmapDirectory::open(building)
            .map_err(tantivy::TantivyError::from)?;
        let index = open_in(directory, &parsed)?;
        let mut writer: IndexWriter = index.writer(WRITER_MEMORY)?;
        // Everything up to the current head is in the snapshot read below.
        let head = store.outbox_head()?;
        let rx = store.read()?;
        let mut summary = BuildSummary::default();
        let mut done = 0u64;
        let fields = &parsed.fields;
        rx.for_each::<crate::model::post::Venue, IndexError>(Kind::Venue, |v| {
            let mut doc = docs::venue(fields, &v);
            doc.add_u64(fields.written, head);
            writer.add_document(doc)?;
            summary.venues += 1;
            done += 1;
            progress(done);
            Ok(())
        })?;
        rx.for_each::<crate::model::post::Organizer, IndexError>(Kind::Organizer, |o| {
            let mut doc = docs::organizer(fields, &o);
            doc.add_u64(fields.written, head);
            writer.add_document(doc)?;
            summary.organizers += 1;
            done += 1;
            progress(done);
            Ok(())
        })?;
        rx.for_each::<crate::model::event::Event, IndexError>(Kind::Event, |e| {
            if let Some(mut doc) = docs::event(fields, &e, &rx)? {
                doc.add_u64(fields.written, head);
                writer.add_document(doc)?;
                summary.events += 1;
            }
            done += 1;
            progress(done);
            Ok(())
        })?;
        let mut prepared = writer.prepare_commit()?;
        prepared.set_payload(
            &serde_json::to_string(&CommitPayload {
                seq: head,
                schema: parsed.version,
            })
            .expect("payloads serialize"),
        );
        prepared.commit()?;
        writer.wait_merging_threads()?;
        // tantivy's own directory synced every file it wrote.
        directory::mark_clean(building)?;
        Ok((summary, head))
    }

    /// Rebuilds the index from the store while the server keeps serving from the current one
    /// (the administrators' reindex route): the new index is built from a snapshot, then,
    /// with writes to the index paused, catches up with what was written meanwhile and
    /// replaces the current one.
    pub(crate) fn rebuild_live(&self, store: &Store) -> IndexResult<BuildSummary> {
        self.rebuilding.store(true, Ordering::SeqCst);
        let result = self.rebuild_live_inner(store);
        self.rebuilding.store(false, Ordering::SeqCst);
        result
    }

    fn rebuild_live_inner(&self, store: &Store) -> IndexResult<BuildSummary> {
        let building = sibling(&self.dir, "building");
        let (summary, head) = Self::build_into(&building, store, |_| {})?;
        let _paused = self.apply_lock.lock().expect("index apply lock");
        let parsed = IndexSchema::load()?;
        {
            let fresh = Live::open(&building, &parsed)?;
            self.apply_to(&fresh, store, head, Commit::Now)?;
            // Its files are about to be renamed away from the list that tracks them.
            fresh.directory.sync()?;
        }
        let old = self.live();
        swap_in(&building, &self.dir)?;
        let fresh = Arc::new(Live::open(&self.dir, &parsed)?);
        // Writes committed meanwhile wait for the indexer, which waits for this lock: apply
        // them now, which also gives the new index its view.
        self.apply_to(&fresh, store, fresh.applied_seq(), Commit::Now)?;
        *self.live.write().expect("live index lock") = fresh;
        drop(old);
        Ok(summary)
    }
}

/// Replaces `dir` by `building` with renames, so that a crash leaves the old or the new index,
/// never a mix (a leftover `.old` or `.building` directory is removed next time).
fn swap_in(building: &Path, dir: &Path) -> IndexResult<()> {
    let old = sibling(dir, "old");
    if old.exists() {
        std::fs::remove_dir_all(&old)?;
    }
    if dir.exists() {
        std::fs::rename(dir, &old)?;
    }
    std::fs::rename(building, dir)?;
    if old.exists() {
        std::fs::remove_dir_all(&old)?;
    }
    Ok(())
}

fn sibling(dir: &Path, suffix: &str) -> PathBuf {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "index".into());
    dir.with_file_name(format!("{name}.{suffix}"))
}
