//! The command line: clap definitions and the exit codes (README.md, "Command line").

use crate::config::{parse_duration, parse_listen, parse_public_url};
use crate::datadir::DataDir;
use crate::http::pages::settings::ViewKind;
use crate::http::pages::Settings as PageSettings;
use crate::index::SearchIndex;
use crate::model::{Kind, Role};
use crate::server::{self, data_dir_exit, Exit, ServeOptions};
use crate::service::users::{self, UserError};
use crate::store::Store;
use crate::values::timezone::Zone;
use clap::{Args, Parser, Subcommand};
use std::io::BufRead;
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "almanac",
    version,
    about = "A search-centric events calendar API server",
    arg_required_else_help = true
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Args)]
struct DataDirArg {
    /// Data directory (created by `serve` and `user add` when missing).
    #[arg(long, env = "ALMANAC_DATA_DIR", default_value = "./almanac-data")]
    data_dir: PathBuf,
}

/// `serve`'s options of the public pages (docs/pages.md, "Settings").
#[derive(Args)]
struct PageArgs {
    /// The site's name, in the pages' header and titles.
    #[arg(long, env = "ALMANAC_SITE_NAME", default_value = "Calendar")]
    site_name: String,
    /// The URL of a logo shown beside the site's name.
    #[arg(long, env = "ALMANAC_LOGO_URL")]
    logo_url: Option<String>,
    /// The pages' accent colour (`#rrggbb`, `#rgb` or a CSS colour name).
    #[arg(long, env = "ALMANAC_ACCENT", default_value = "#1d5fbf", value_parser = parse_accent)]
    accent: String,
    /// The view of `/events/`: list, month, week or day.
    #[arg(long, env = "ALMANAC_DEFAULT_VIEW", default_value = "list", value_parser = parse_view)]
    default_view: ViewKind,
    /// The first day of the week in the month and week views: monday or sunday (or any day).
    #[arg(long, env = "ALMANAC_WEEK_START", default_value = "monday", value_parser = parse_weekday)]
    week_start: chrono::Weekday,
    /// The zone "today" is read in (an IANA name such as Europe/Lisbon, or UTC).
    #[arg(long, env = "ALMANAC_TIME_ZONE", default_value = "UTC", value_parser = parse_zone)]
    time_zone: Zone,
    /// Events shown in a day of the month view before its "+ N more" link.
    #[arg(long, env = "ALMANAC_MONTH_EVENTS_PER_DAY", default_value_t = 3, value_parser = clap::value_parser!(u16).range(1..=50))]
    month_events_per_day: u16,
    /// A CSS file appended to the built-in stylesheet.
    #[arg(long, env = "ALMANAC_EXTRA_CSS")]
    extra_css: Option<PathBuf>,
    /// Origins (comma-separated, `https://host[:port]`) whose pages may frame `/embed/…`.
    #[arg(long, env = "ALMANAC_EMBED_ORIGINS", value_delimiter = ',', value_parser = parse_origin)]
    embed_origins: Vec<String>,
    /// Origins (comma-separated) whose images the pages show besides the site's own.
    #[arg(long, env = "ALMANAC_IMAGE_ORIGINS", value_delimiter = ',', value_parser = parse_origin)]
    image_origins: Vec<String>,
    /// Let visitors propose events (`/events/propose/`), pending until an editor reviews them.
    #[arg(long, env = "ALMANAC_PUBLIC_SUBMISSIONS", value_parser = clap::builder::BoolishValueParser::new())]
    public_submissions: bool,
}

impl PageArgs {
    fn settings(self) -> Result<PageSettings, Exit> {
        let extra_css = match &self.extra_css {
            Some(path) => Some(std::fs::read_to_string(path).map_err(|e| {
                Exit::new(
                    2,
                    format!("cannot read --extra-css {}: {e}", path.display()),
                )
            })?),
            None => None,
        };
        Ok(PageSettings {
            site_name: self.site_name,
            logo_url: self.logo_url.filter(|u| !u.is_empty()),
            accent: self.accent,
            default_view: self.default_view,
            week_start: self.week_start,
            zone: self.time_zone,
            month_events_per_day: usize::from(self.month_events_per_day),
            extra_css,
            embed_origins: self.embed_origins,
            image_origins: self.image_origins,
            public_submissions: self.public_submissions,
            ..PageSettings::default()
        })
    }
}

fn parse_accent(value: &str) -> Result<String, String> {
    if crate::http::pages::settings::valid_accent(value) {
        Ok(value.to_string())
    } else {
        Err("a colour as #rrggbb, #rgb or a CSS colour name".into())
    }
}

fn parse_view(value: &str) -> Result<ViewKind, String> {
    ViewKind::parse(value).ok_or_else(|| "one of list, month, week, day".to_string())
}

fn parse_weekday(value: &str) -> Result<chrono::Weekday, String> {
    value
        .parse()
        .map_err(|_| "a day of the week (monday, sunday, …)".to_string())
}

fn parse_zone(value: &str) -> Result<Zone, String> {
    Zone::parse(value).map_err(|_| "an IANA time zone name (Europe/Lisbon) or UTC".to_string())
}

fn parse_origin(value: &str) -> Result<String, String> {
    let value = value.trim().trim_end_matches('/');
    if crate::http::pages::settings::valid_origin(value) {
        Ok(value.to_string())
    } else {
        Err(format!("{value:?} is not an origin (https://host[:port])"))
    }
}

#[derive(Args)]
struct ClusterArg {
    /// Work on the cluster whose log is in this PostgreSQL database (a connection string)
    /// instead of the data directory.
    #[arg(long, env = "ALMANAC_CLUSTER_URL")]
    cluster: Option<String>,
}

/// `almanac import --from URL` (docs/operations.md, "Moving in from WordPress").
#[derive(Args)]
struct RemoteArgs {
    /// Copy from this REST root of an events API instead of a file: The Events Calendar's
    /// (`https://site/wp-json/tribe/events/v1`) or another almanac's (`…/cal/events/v1`); or
    /// from an iCalendar feed (an `https://`, `webcal://` address or a `.ics` file). Run
    /// again, it updates what changed at the source.
    #[arg(long, value_name = "URL")]
    from: Option<String>,
    /// HTTP Basic credentials at the source (a WordPress application password): every status
    /// the user may read is copied, not only published records. Sent to a feed too.
    #[arg(
        long,
        env = "ALMANAC_SOURCE_USER",
        value_name = "NAME:PASSWORD",
        requires = "from",
        hide_env_values = true
    )]
    user: Option<String>,
    /// From another almanac: only this language (default: all). From The Events Calendar:
    /// the language of the copied records (default: en).
    #[arg(long, value_parser = parse_language, requires = "from")]
    language: Option<crate::model::Language>,
    /// Also trash the records that are no longer at the source (only after a walk without
    /// errors).
    #[arg(long, requires = "from")]
    mirror: bool,
    /// Pages fetched at once.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..=32), requires = "from")]
    concurrency: u64,
    /// Tries after the first on a network error, a timeout, a 5xx or a 429 (with backoff,
    /// honouring `Retry-After`).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(0..=20), requires = "from")]
    retries: u32,
    /// Seconds to wait for each answer of the source.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=600), requires = "from")]
    timeout: u64,
    /// From an iCalendar feed: every copied event is also in this category (made if missing).
    #[arg(long, value_name = "NAME", requires = "from")]
    category: Option<String>,
    /// From an iCalendar feed: the status of the copied events, draft or publish (private
    /// events stay private).
    #[arg(long, default_value = "publish", value_parser = parse_feed_status, requires = "from")]
    status: crate::model::Status,
}

fn parse_mirror(value: &str) -> Result<crate::transfer::ical::MirrorSpec, String> {
    crate::transfer::ical::MirrorSpec::parse(value)
}

fn parse_feed_status(value: &str) -> Result<crate::model::Status, String> {
    crate::transfer::ical::parse_status(value)
}

fn parse_language(code: &str) -> Result<crate::model::Language, String> {
    crate::model::Language::from_code(code).ok_or_else(|| "one of en, pt-br, es".to_string())
}

#[derive(Subcommand)]
enum Command {
    /// Run the HTTP server.
    Serve {
        #[command(flatten)]
        data_dir: DataDirArg,
        /// IP literal and port to listen on; port 0 picks a free port.
        #[arg(long, env = "ALMANAC_LISTEN", default_value = "127.0.0.1:8080", value_parser = parse_listen)]
        listen: SocketAddr,
        /// Also serve `GET /metrics` without credentials on this IP literal and port (for a
        /// scraper on a private network); port 0 picks a free port.
        #[arg(long, env = "ALMANAC_METRICS_LISTEN", value_parser = parse_listen)]
        metrics_listen: Option<SocketAddr>,
        /// Absolute base URL used in links (default: http:// + the bound address).
        #[arg(long, env = "ALMANAC_PUBLIC_URL", value_parser = parse_public_url)]
        public_url: Option<String>,
        /// Load the demo calendar (a few hundred upcoming events) into a store without events.
        #[arg(long)]
        demo: bool,
        /// Run as a node of a cluster: a PostgreSQL connection string (`postgres://…` or
        /// `host=… user=…`) whose database holds the calendar's log.
        #[arg(long, env = "ALMANAC_CLUSTER_URL")]
        cluster: Option<String>,
        /// Mirror an iCalendar feed while serving: `URL[,every=15m][,category=NAME]
        /// [,language=LANG][,status=draft|publish]` (repeatable).
        #[arg(long = "mirror", value_name = "SPEC", value_parser = parse_mirror)]
        mirrors: Vec<crate::transfer::ical::MirrorSpec>,
        /// A file of mirrors, one SPEC a line (`#` starts a comment).
        #[arg(long, value_name = "FILE")]
        mirror_file: Option<PathBuf>,
        /// How long the change feed remembers deletions (`30d`, `12h`): a token older than
        /// the oldest deletion it remembers is expired.
        #[arg(long, env = "ALMANAC_CHANGE_RETENTION", default_value = "30d", value_parser = parse_duration)]
        change_retention: std::time::Duration,
        /// How long a webhook endpoint may keep failing before its deliveries are suspended
        /// (`24h`, `3d`).
        #[arg(long, env = "ALMANAC_WEBHOOK_RETRY_PERIOD", default_value = "24h", value_parser = parse_duration)]
        webhook_retry_period: std::time::Duration,
        #[command(flatten)]
        pages: Box<PageArgs>,
    },
    /// Rebuild the search index from the store (refused while a server holds the directory).
    Reindex {
        #[command(flatten)]
        data_dir: DataDirArg,
    },
    /// Load a calendar from JSON lines written by `export`, or copy one from another site's
    /// events API with `--from` (IDs and slugs kept; refused records are reported and the
    /// others loaded).
    Import {
        /// The JSON-lines file (`-` reads standard input).
        #[arg(required_unless_present = "from", conflicts_with = "from")]
        file: Option<PathBuf>,
        #[command(flatten)]
        data_dir: DataDirArg,
        /// Lines per store transaction and index commit.
        #[arg(long, default_value_t = 5000, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
        batch: u64,
        #[command(flatten)]
        cluster: ClusterArg,
        #[command(flatten)]
        remote: RemoteArgs,
    },
    /// Write every record as JSON lines (the API's representations), categories first and
    /// events last.
    Export {
        #[command(flatten)]
        data_dir: DataDirArg,
        /// Write to this file instead of standard output.
        #[arg(long)]
        output: Option<PathBuf>,
        /// Base URL of the links in the representations.
        #[arg(long, default_value = "http://127.0.0.1:8080", value_parser = parse_public_url)]
        public_url: String,
        #[command(flatten)]
        cluster: ClusterArg,
    },
    /// Fill a data directory without events with a generated calendar (benchmarks).
    Generate {
        #[command(flatten)]
        data_dir: DataDirArg,
        /// How many events.
        #[arg(long, default_value_t = 1000)]
        events: usize,
        /// Seed of the generator: the same seed gives the same calendar.
        #[arg(long, default_value_t = 2026)]
        seed: u64,
        /// The demo's shape (one year from today, no hidden records) instead of the
        /// benchmarks' (three years from 2026-01-01); `export` it to refresh data/demo.jsonl.
        #[arg(long)]
        demo: bool,
    },
    /// Manage users.
    User {
        #[command(subcommand)]
        command: UserCommand,
    },
    /// Manage the webhook endpoints that hear of every change.
    Webhook {
        #[command(subcommand)]
        command: WebhookCommand,
    },
    /// Look after a cluster of nodes on PostgreSQL.
    Cluster {
        #[command(subcommand)]
        command: ClusterCommand,
    },
}

#[derive(Subcommand)]
enum ClusterCommand {
    /// Upload this data directory's calendar into an empty cluster; the data directory can
    /// then serve as its first node.
    Init {
        #[command(flatten)]
        data_dir: DataDirArg,
        /// The PostgreSQL database that will hold the cluster's log (a connection string).
        #[arg(long, env = "ALMANAC_CLUSTER_URL")]
        cluster: String,
    },
    /// Drop log entries older than a duration (the head is always kept); nodes further behind
    /// copy the snapshot when they come back.
    Prune {
        /// How much of the log to keep: a number and a unit, `s`, `m`, `h` or `d` (`7d`).
        #[arg(long, value_parser = parse_duration)]
        keep: std::time::Duration,
        /// The PostgreSQL database holding the cluster's log (a connection string).
        #[arg(long, env = "ALMANAC_CLUSTER_URL")]
        cluster: String,
    },
    /// The log's head, and each node's applied position, lag and when it last reported:
    /// tab-separated, one node per line after the head.
    Status {
        /// The PostgreSQL database holding the cluster's log (a connection string).
        #[arg(long, env = "ALMANAC_CLUSTER_URL")]
        cluster: String,
    },
}

#[derive(Args)]
#[group(multiple = false)]
struct PasswordSource {
    /// The password (a random one is generated and printed when neither option is given).
    #[arg(long)]
    password: Option<String>,
    /// Read the password from one line of standard input.
    #[arg(long)]
    password_stdin: bool,
}

#[derive(Subcommand)]
enum UserCommand {
    /// Add a user.
    Add {
        name: String,
        /// administrator, editor, author, contributor or subscriber.
        #[arg(long, value_parser = parse_role)]
        role: Role,
        #[command(flatten)]
        password: PasswordSource,
        #[command(flatten)]
        data_dir: DataDirArg,
        #[command(flatten)]
        cluster: ClusterArg,
    },
    /// List users: ID, name and role, tab-separated, ordered by ID.
    List {
        #[command(flatten)]
        data_dir: DataDirArg,
        #[command(flatten)]
        cluster: ClusterArg,
    },
    /// Replace a user's password.
    SetPassword {
        name: String,
        #[command(flatten)]
        password: PasswordSource,
        #[command(flatten)]
        data_dir: DataDirArg,
        #[command(flatten)]
        cluster: ClusterArg,
    },
}

#[derive(Subcommand)]
enum WebhookCommand {
    /// Register an endpoint: every change from now on is posted to it, signed; prints its ID
    /// and signing key.
    Add {
        url: String,
        /// The collections whose changes are posted, comma-separated (events, venues,
        /// organizers, categories, tags); all by default.
        #[arg(long, default_value = "")]
        kinds: String,
        /// A file holding the signing key (16 characters or more); made up when not given.
        #[arg(long)]
        secret_file: Option<PathBuf>,
        #[command(flatten)]
        data_dir: DataDirArg,
        #[command(flatten)]
        cluster: ClusterArg,
    },
    /// List the endpoints: ID, state, the token delivered up to, URL and last error,
    /// tab-separated.
    List {
        #[command(flatten)]
        data_dir: DataDirArg,
        #[command(flatten)]
        cluster: ClusterArg,
    },
    /// Remove an endpoint.
    Remove {
        id: u64,
        #[command(flatten)]
        data_dir: DataDirArg,
        #[command(flatten)]
        cluster: ClusterArg,
    },
    /// Deliver again to an endpoint suspended after failing, from where deliveries stopped.
    Resume {
        id: u64,
        #[command(flatten)]
        data_dir: DataDirArg,
        #[command(flatten)]
        cluster: ClusterArg,
    },
}

fn parse_role(value: &str) -> Result<Role, String> {
    Role::parse(value).ok_or_else(|| {
        "expected administrator, editor, author, contributor or subscriber".to_string()
    })
}

/// Runs the command line and returns the process exit code.
pub fn main() -> i32 {
    unset_empty_environment();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help/version to stdout (exit 0) and usage errors to stderr (exit 2).
            let _ = e.print();
            return e.exit_code();
        }
    };
    // Everything almanac creates in the data directory (store, index, lock and password
    // files) is private to its user: directories 0700, files 0600, whatever creates
    // them (redb and tantivy open their files with the default mode).
    // SAFETY: umask only sets the process's file-creation mask; it cannot fail.
    unsafe {
        libc::umask(0o077);
    }
    if let Err(message) = init_logging() {
        eprintln!("error: {message}");
        return 2;
    }
    match run(cli.command) {
        Ok(()) => 0,
        Err(exit) => {
            eprintln!("error: {}", exit.message);
            exit.code
        }
    }
}

/// The contract treats an environment variable set to the empty string as unset; clap would
/// treat it as an empty value. Called first thing, while the process is single-threaded.
fn unset_empty_environment() {
    for name in [
        "ALMANAC_DATA_DIR",
        "ALMANAC_LISTEN",
        "ALMANAC_METRICS_LISTEN",
        "ALMANAC_PUBLIC_URL",
        "ALMANAC_LOG",
        "ALMANAC_LOG_FORMAT",
    ] {
        if std::env::var_os(name).is_some_and(|v| v.is_empty()) {
            std::env::remove_var(name);
        }
    }
}

/// stderr logging filtered by `ALMANAC_LOG` (default `info`), as text or JSON lines
/// (`ALMANAC_LOG_FORMAT`, see [`crate::config::LogFormat`]).
fn init_logging() -> Result<(), String> {
    let format = crate::config::LogFormat::from_env()?;
    let directives = std::env::var("ALMANAC_LOG")
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "info".into());
    let filter = tracing_subscriber::EnvFilter::try_new(&directives)
        .map_err(|e| format!("invalid ALMANAC_LOG {directives:?}: {e}"))?;
    let subscriber = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        crate::config::LogFormat::Text => subscriber
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .init(),
        // One object per line: time, level, target and the event's fields at the top level.
        crate::config::LogFormat::Json => subscriber
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .with_span_list(false)
            .init(),
    }
    Ok(())
}

fn run(command: Command) -> Result<(), Exit> {
    match command {
        Command::Serve {
            data_dir,
            listen,
            metrics_listen,
            public_url,
            demo,
            cluster,
            mut mirrors,
            mirror_file,
            change_retention,
            webhook_retry_period,
            pages,
        } => {
            if let Some(path) = mirror_file {
                let text = std::fs::read_to_string(&path).map_err(|e| {
                    Exit::new(
                        2,
                        format!("cannot read --mirror-file {}: {e}", path.display()),
                    )
                })?;
                for (n, line) in text.lines().enumerate() {
                    let line = line.split('#').next().unwrap_or_default().trim();
                    if !line.is_empty() {
                        mirrors.push(parse_mirror(line).map_err(|e| {
                            Exit::new(2, format!("{} line {}: {e}", path.display(), n + 1))
                        })?);
                    }
                }
            }
            server::serve(ServeOptions {
                data_dir: data_dir.data_dir,
                listen,
                metrics_listen,
                public_url,
                demo,
                cluster,
                mirrors,
                change_retention,
                webhook_retry_period,
                pages: pages.settings()?,
            })
        }
        Command::User { command } => run_user(command),
        Command::Webhook { command } => run_webhook(command),
        Command::Cluster {
            command: ClusterCommand::Status { cluster },
        } => cluster_status(&cluster),
        Command::Cluster {
            command: ClusterCommand::Prune { keep, cluster },
        } => {
            let dropped = crate::cluster::prune(&cluster, keep)
                .map_err(|e| Exit::new(1, format!("cannot prune the cluster log: {e}")))?;
            println!("dropped {dropped} log entries");
            Ok(())
        }
        Command::Cluster {
            command: ClusterCommand::Init { data_dir, cluster },
        } => {
            let (_dir, store) = open_store(&data_dir.data_dir, false)?;
            crate::cluster::initialize(&cluster, "almanac cluster init", &store)
                .map_err(|e| Exit::new(1, format!("cannot initialize the cluster: {e}")))?;
            println!("the cluster now holds this calendar (log position 1)");
            Ok(())
        }
        Command::Reindex { data_dir } => reindex(&data_dir.data_dir),
        Command::Import {
            file,
            data_dir,
            batch,
            cluster,
            remote,
        } => match (file, remote.from.clone()) {
            (_, Some(url)) => import_from(url, remote, &data_dir.data_dir, &cluster),
            (Some(file), None) => import(&file, &data_dir.data_dir, &cluster, batch as usize),
            (None, None) => unreachable!("clap requires a file or --from"),
        },
        Command::Export {
            data_dir,
            output,
            public_url,
            cluster,
        } => export(&data_dir.data_dir, &cluster, output.as_deref(), &public_url),
        Command::Generate {
            data_dir,
            events,
            seed,
            demo,
        } => {
            let shape = if demo {
                crate::generate::Shape {
                    events,
                    ..crate::generate::demo_shape(chrono::Utc::now().naive_utc())
                }
            } else {
                crate::generate::Shape::for_events(events)
            };
            generate(&data_dir.data_dir, &shape, seed)
        }
    }
}

fn run_webhook(command: WebhookCommand) -> Result<(), Exit> {
    use crate::auth::capabilities::OPERATOR;
    use crate::service::webhooks;
    let open = |data_dir: &DataDirArg, cluster: &ClusterArg| {
        CalendarStore::open(
            &data_dir.data_dir,
            cluster,
            crate::cluster::ReplicaScope::Webhooks,
            false,
        )
    };
    let failed = |e: crate::service::ServiceError| Exit::new(1, service_message(e));
    match command {
        WebhookCommand::Add {
            url,
            kinds,
            secret_file,
            data_dir,
            cluster,
        } => {
            let kinds = webhooks::parse_kinds(&kinds)
                .map_err(|why| Exit::new(2, format!("--kinds {}", why.reason)))?;
            let secret = match secret_file {
                Some(path) => Some(
                    std::fs::read_to_string(&path)
                        .map_err(|e| {
                            Exit::new(
                                2,
                                format!("cannot read --secret-file {}: {e}", path.display()),
                            )
                        })?
                        .trim()
                        .to_string(),
                ),
                None => None,
            };
            let write = webhooks::WebhookWrite { url, kinds, secret };
            let calendar = open(&data_dir, &cluster)?;
            let webhook =
                webhooks::add(calendar.store(), OPERATOR, &write, Vec::new()).map_err(failed)?;
            println!("added webhook {} for {}", webhook.id, webhook.url);
            println!("secret: {}", webhook.secret);
            Ok(())
        }
        WebhookCommand::List { data_dir, cluster } => {
            let calendar = open(&data_dir, &cluster)?;
            for webhook in webhooks::list(calendar.store(), OPERATOR).map_err(failed)? {
                println!(
                    "{}\t{}\t{}\t{}\t{}",
                    webhook.id,
                    webhook.state(),
                    crate::service::changes::token(webhook.delivered),
                    webhook.url,
                    webhook.last_error.as_deref().unwrap_or("")
                );
            }
            Ok(())
        }
        WebhookCommand::Remove {
            id,
            data_dir,
            cluster,
        } => {
            let calendar = open(&data_dir, &cluster)?;
            let webhook = webhooks::remove(calendar.store(), OPERATOR, id).map_err(failed)?;
            println!("removed webhook {} for {}", webhook.id, webhook.url);
            Ok(())
        }
        WebhookCommand::Resume {
            id,
            data_dir,
            cluster,
        } => {
            let calendar = open(&data_dir, &cluster)?;
            let webhook = webhooks::resume(calendar.store(), OPERATOR, id).map_err(failed)?;
            println!("resumed webhook {} for {}", webhook.id, webhook.url);
            Ok(())
        }
    }
}

/// What a refused command line use case says.
fn service_message(e: crate::service::ServiceError) -> String {
    match e {
        crate::service::ServiceError::Invalid(refusals) => refusals
            .iter()
            .map(|(name, why)| format!("{name} {}", why.reason))
            .collect::<Vec<_>>()
            .join("; "),
        other => format!("{other:?}"),
    }
}

fn run_user(command: UserCommand) -> Result<(), Exit> {
    match command {
        UserCommand::Add {
            name,
            role,
            password,
            data_dir,
            cluster,
        } => {
            let (password, generated) = password.resolve()?;
            users::validate_name(&name).map_err(user_exit)?;
            let calendar = CalendarStore::open(
                &data_dir.data_dir,
                &cluster,
                crate::cluster::ReplicaScope::Users,
                true,
            )?;
            let user = users::add(calendar.store(), &name, role, &password).map_err(user_exit)?;
            println!(
                "added user {} ({}) with ID {}",
                user.name, user.role, user.id
            );
            if generated {
                println!("password: {password}");
            }
            Ok(())
        }
        UserCommand::List { data_dir, cluster } => {
            let calendar = CalendarStore::open(
                &data_dir.data_dir,
                &cluster,
                crate::cluster::ReplicaScope::Users,
                false,
            )?;
            for user in users::list(calendar.store()).map_err(user_exit)? {
                println!("{}\t{}\t{}", user.id, user.name, user.role);
            }
            Ok(())
        }
        UserCommand::SetPassword {
            name,
            password,
            data_dir,
            cluster,
        } => {
            let (password, generated) = password.resolve()?;
            let calendar = CalendarStore::open(
                &data_dir.data_dir,
                &cluster,
                crate::cluster::ReplicaScope::Users,
                false,
            )?;
            users::set_password(calendar.store(), &name, &password).map_err(user_exit)?;
            if generated {
                println!("password: {password}");
            }
            Ok(())
        }
    }
}

fn cluster_status(url: &str) -> Result<(), Exit> {
    let (head, nodes) = crate::cluster::status(url)
        .map_err(|e| Exit::new(1, format!("cannot read the cluster's status: {e}")))?;
    println!("log head\t{head}");
    for node in nodes {
        println!(
            "{}\tapplied {}\tlag {}\tseen {} s ago",
            node.node,
            node.applied,
            head.saturating_sub(node.applied),
            node.seen_seconds_ago
        );
    }
    Ok(())
}

/// Where a command finds the calendar: the data directory (held locked while the command
/// runs), or a temporary replica of the cluster that writes through its log.
enum CalendarStore {
    Local { _lock: DataDir, store: Store },
    Cluster(crate::cluster::Replica),
}

impl CalendarStore {
    fn open(
        data_dir: &std::path::Path,
        cluster: &ClusterArg,
        scope: crate::cluster::ReplicaScope,
        create: bool,
    ) -> Result<CalendarStore, Exit> {
        match &cluster.cluster {
            Some(url) => crate::cluster::Replica::open(url, scope)
                .map(CalendarStore::Cluster)
                .map_err(|e| Exit::new(1, format!("cannot use the cluster log: {e}"))),
            None => {
                let (dir, store) = open_store(data_dir, create)?;
                Ok(CalendarStore::Local { _lock: dir, store })
            }
        }
    }

    fn store(&self) -> &Store {
        match self {
            CalendarStore::Local { store, .. } => store,
            CalendarStore::Cluster(replica) => replica.store(),
        }
    }
}

impl PasswordSource {
    /// The password to use, and whether it was generated (and must be printed).
    fn resolve(self) -> Result<(String, bool), Exit> {
        let password = if self.password_stdin {
            let mut line = String::new();
            std::io::stdin()
                .lock()
                .read_line(&mut line)
                .map_err(|_| Exit::new(2, "standard input is not a UTF-8 line"))?;
            let line = line.strip_suffix('\n').unwrap_or(&line);
            Some(line.strip_suffix('\r').unwrap_or(line).to_string())
        } else {
            self.password
        };
        match password {
            Some(p) => {
                users::validate_password(&p).map_err(user_exit)?;
                Ok((p, false))
            }
            None => Ok((crate::auth::password::generate(), true)),
        }
    }
}

/// `almanac reindex`: a fresh index built beside the old one, then swapped in.
fn reindex(root: &std::path::Path) -> Result<(), Exit> {
    let (dir, store) = open_store(root, false)?;
    let total = store
        .read()
        .and_then(|rx| {
            let mut n = 0;
            for kind in [Kind::Event, Kind::Venue, Kind::Organizer] {
                n += rx.count(kind)?;
            }
            Ok(n)
        })
        .map_err(|e| Exit::new(1, e))?;
    let bar = progress_bar(total, "records");
    let summary = SearchIndex::rebuild(&dir.index_path(), &store, |done| bar.set_position(done))
        .map_err(|e| Exit::new(1, e))?;
    bar.finish_and_clear();
    // Everything in the outbox is in the new index.
    let head = store.outbox_head().map_err(|e| Exit::new(1, e))?;
    store.prune_outbox(head).map_err(|e| Exit::new(1, e))?;
    println!(
        "reindexed {} events, {} venues, {} organizers",
        summary.events, summary.venues, summary.organizers
    );
    Ok(())
}

fn progress_bar(len: u64, unit: &str) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(len);
    bar.set_style(
        indicatif::ProgressStyle::with_template(&format!(
            "{{bar:40}} {{pos}}/{{len}} {unit} ({{per_sec}}, {{eta}} left)"
        ))
        .expect("a valid progress template"),
    );
    bar
}

/// `almanac import FILE`: batches of lines, each one store transaction; the indexer applies
/// them alongside and has everything applied before the command returns.
/// `almanac import`: into a data directory (indexed before it returns), or through a cluster's
/// log (each batch one log entry; the nodes index what they apply).
fn import(
    file: &std::path::Path,
    root: &std::path::Path,
    cluster: &ClusterArg,
    batch: usize,
) -> Result<(), Exit> {
    let (input, len): (Box<dyn std::io::Read>, u64) = if file.as_os_str() == "-" {
        (Box::new(std::io::stdin()), 0)
    } else {
        let f = std::fs::File::open(file)
            .map_err(|e| Exit::new(1, format!("cannot open {}: {e}", file.display())))?;
        let len = f.metadata().map(|m| m.len()).unwrap_or(0);
        (Box::new(f), len)
    };
    let bar = progress_bar(len, "bytes");
    let reader = std::io::BufReader::with_capacity(1 << 20, bar.wrap_read(input));
    let mut refused = 0u64;
    let options = crate::transfer::ImportOptions {
        batch,
        ..Default::default()
    };
    let load = |store: &Store| {
        crate::transfer::import(
            store,
            reader,
            &options,
            |_| {},
            |rejection| {
                refused += 1;
                bar.suspend(|| eprintln!("line {}: {}", rejection.line, rejection.reason));
            },
        )
    };
    let result = with_calendar(root, cluster, load)?;
    bar.finish_and_clear();
    let summary = result.map_err(|e| Exit::new(1, e))?;
    println!("imported {summary}; refused {refused} lines");
    if refused > 0 {
        return Err(Exit::new(1, format!("{refused} lines were refused")));
    }
    Ok(())
}

/// Runs `load` on the calendar: a data directory (whose index is brought up to date before
/// it returns), or a cluster's log (the nodes index what they apply).
fn with_calendar<T>(
    root: &std::path::Path,
    cluster: &ClusterArg,
    load: impl FnOnce(&Store) -> T,
) -> Result<T, Exit> {
    match &cluster.cluster {
        Some(_) => {
            let calendar =
                CalendarStore::open(root, cluster, crate::cluster::ReplicaScope::Calendar, false)?;
            Ok(load(calendar.store()))
        }
        None => {
            let (dir, store) = open_store(root, true)?;
            let store = std::sync::Arc::new(store);
            let index = std::sync::Arc::new(
                SearchIndex::open(&dir.index_path(), &store).map_err(|e| Exit::new(1, e))?,
            );
            let indexer = crate::index::indexer::Indexer::start_bulk(store.clone(), index.clone());
            let result = load(&store);
            indexer.stop();
            Ok(result)
        }
    }
}

/// `almanac import --from URL`: one summary line on standard output; refused records and
/// the error that stopped a run on standard error.
fn import_from(
    url: String,
    remote: RemoteArgs,
    root: &std::path::Path,
    cluster: &ClusterArg,
) -> Result<(), Exit> {
    let user = match remote.user.clone() {
        None => None,
        Some(credentials) => match credentials.split_once(':') {
            Some((name, password)) if !name.is_empty() => {
                Some((name.to_string(), password.to_string()))
            }
            _ => return Err(Exit::new(2, "--user must be NAME:PASSWORD")),
        },
    };
    let bar = progress_bar(0, "records");
    let mut report = |event: crate::transfer::PullEvent| match event {
        crate::transfer::PullEvent::Announced(n) => bar.inc_length(n),
        crate::transfer::PullEvent::Handled(n) => bar.inc(n),
        crate::transfer::PullEvent::Refused { kind, id, reason } => {
            bar.suspend(|| eprintln!("{} {id} refused: {reason}", kind.name()))
        }
        crate::transfer::PullEvent::Notice(notice) => bar.suspend(|| eprintln!("{notice}")),
    };
    let feed = crate::transfer::ical::FeedOptions {
        source: url.clone(),
        language: remote.language.unwrap_or(crate::model::Language::En),
        category: remote.category.clone(),
        status: remote.status,
        mirror: remote.mirror,
    };
    let result = with_calendar(root, cluster, |store| {
        match crate::transfer::ical::run(store, &feed, &connection(&user, &remote), &mut report) {
            Ok(Some(summary)) => Ok(summary),
            Ok(None) => {
                let options = api_options(url, user, &remote);
                crate::transfer::pull(store, &options, &mut report).map_err(|e| e.to_string())
            }
            Err(e) => Err(e),
        }
    })?;
    bar.finish_and_clear();
    let summary = result
        .map_err(|e| Exit::new(1, format!("the import stopped (nothing was trashed): {e}")))?;
    println!("{summary}");
    if summary.refused > 0 {
        return Err(Exit::new(
            1,
            format!("{} records were refused", summary.refused),
        ));
    }
    Ok(())
}

/// How the source is reached: `--user`, `--timeout`, `--retries`.
fn connection(user: &Option<(String, String)>, remote: &RemoteArgs) -> crate::transfer::Connection {
    crate::transfer::Connection {
        user: user.clone(),
        timeout: std::time::Duration::from_secs(remote.timeout),
        retries: remote.retries,
        backoff: std::time::Duration::from_millis(500),
    }
}

/// How an events API source is read.
fn api_options(
    url: String,
    user: Option<(String, String)>,
    remote: &RemoteArgs,
) -> crate::transfer::PullOptions {
    crate::transfer::PullOptions {
        url,
        connection: connection(&user, remote),
        language: remote.language,
        mirror: remote.mirror,
        concurrency: remote.concurrency as usize,
    }
}

fn export(
    root: &std::path::Path,
    cluster: &ClusterArg,
    output: Option<&std::path::Path>,
    public_url: &str,
) -> Result<(), Exit> {
    let calendar =
        CalendarStore::open(root, cluster, crate::cluster::ReplicaScope::Calendar, false)?;
    let store = calendar.store();
    let write_error = |e: std::io::Error| Exit::new(1, format!("cannot write the export: {e}"));
    let summary = match output {
        Some(path) => {
            let mut out =
                std::io::BufWriter::new(std::fs::File::create(path).map_err(write_error)?);
            crate::transfer::export(store, public_url, &mut out)
        }
        None => {
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            crate::transfer::export(store, public_url, &mut out)
        }
    }
    .map_err(|e| Exit::new(1, e))?;
    eprintln!("exported {summary}");
    Ok(())
}

/// `almanac generate`: a deterministic calendar for benchmarks, indexed before it returns.
fn generate(root: &std::path::Path, shape: &crate::generate::Shape, seed: u64) -> Result<(), Exit> {
    let (dir, store) = open_store(root, true)?;
    let existing = store
        .read()
        .and_then(|rx| rx.count(Kind::Event))
        .map_err(|e| Exit::new(1, e))?;
    if existing > 0 {
        return Err(Exit::new(1, "the data directory already holds events"));
    }
    let started = std::time::Instant::now();
    crate::generate::populate(&store, shape, seed).map_err(|e| Exit::new(1, e))?;
    let generated = started.elapsed();
    let summary =
        SearchIndex::rebuild(&dir.index_path(), &store, |_| {}).map_err(|e| Exit::new(1, e))?;
    let head = store.outbox_head().map_err(|e| Exit::new(1, e))?;
    store.prune_outbox(head).map_err(|e| Exit::new(1, e))?;
    println!(
        "generated {} events, {} venues, {} organizers in {:.1} s; indexed in {:.1} s",
        summary.events,
        summary.venues,
        summary.organizers,
        generated.as_secs_f64(),
        (started.elapsed() - generated).as_secs_f64()
    );
    Ok(())
}

fn open_store(root: &std::path::Path, create: bool) -> Result<(DataDir, Store), Exit> {
    let dir = DataDir::open(root, create).map_err(data_dir_exit)?;
    let store_path = dir.store_path().map_err(data_dir_exit)?;
    let store = Store::open(&store_path).map_err(|e| Exit::new(1, e))?;
    Ok((dir, store))
}

fn user_exit(e: UserError) -> Exit {
    let code = match e {
        UserError::InvalidName(_) | UserError::InvalidPassword => 2,
        UserError::NameTaken(_) | UserError::UnknownUser(_) => 4,
        UserError::Store(_) => 1,
    };
    Exit::new(code, e)
}
