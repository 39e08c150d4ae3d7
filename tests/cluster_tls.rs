//! Cluster mode over TLS, configured the way libpq users know (`sslmode`, `sslrootcert`,
//! `sslcert`, `sslkey`): throw-away PostgreSQL servers listening on 127.0.0.1 with
//! certificates made here by a test CA (rcgen). What each mode accepts and refuses, the errors
//! that say why, client certificates, and a node serving through TLS.

mod common;

use common::postgres::Postgres;
use common::*;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use serde_json::json;
use std::time::Duration;

const PUBLIC: &str = "http://calendar.example";

/// A certificate authority of the test's own.
struct Ca {
    pem: String,
    issuer: Issuer<'static, KeyPair>,
}

impl Ca {
    fn new(name: &str) -> Ca {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let key = KeyPair::generate().unwrap();
        let pem = params.self_signed(&key).unwrap().pem();
        Ca {
            pem,
            issuer: Issuer::new(params, key),
        }
    }

    /// A certificate and its key (PEM) for `names` (host names) or, with `client`, for the
    /// PostgreSQL user `cn`.
    fn issue(&self, cn: &str, names: &[&str], client: bool) -> (String, String) {
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let mut params = CertificateParams::new(names).unwrap();
        params.distinguished_name.push(DnType::CommonName, cn);
        params.extended_key_usages = vec![if client {
            ExtendedKeyUsagePurpose::ClientAuth
        } else {
            ExtendedKeyUsagePurpose::ServerAuth
        }];
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        (cert.pem(), key.serialize_pem())
    }
}

/// A PostgreSQL server on 127.0.0.1 with TLS (a certificate for `localhost` only, from `ca`),
/// refusing connections without TLS; the user `certified` signs in with a client certificate
/// only.
fn tls_server(ca: &Ca) -> Postgres {
    let mut pg = Postgres::init();
    let (cert, key) = ca.issue("localhost", &["localhost"], false);
    let conf = vec![
        "ssl = on".to_string(),
        format!(
            "ssl_cert_file = '{}'",
            pg.server_file("server.crt", &cert, false)
        ),
        format!(
            "ssl_key_file = '{}'",
            pg.server_file("server.key", &key, true)
        ),
        format!(
            "ssl_ca_file = '{}'",
            pg.server_file("ca.crt", &ca.pem, false)
        ),
    ];
    pg.listen_tcp(
        &conf,
        "local all all trust\n\
         hostssl all certified 127.0.0.1/32 cert\n\
         hostssl all all 127.0.0.1/32 trust\n\
         hostnossl all all 127.0.0.1/32 reject\n",
    );
    pg.start_again();
    let mut admin = ::postgres::Client::connect(&pg.url(), ::postgres::NoTls).unwrap();
    admin
        .batch_execute("CREATE ROLE certified LOGIN SUPERUSER")
        .unwrap();
    pg
}

/// `almanac cluster status` with this connection string: its stdout, or its stderr when it
/// fails.
fn status(conninfo: &str) -> Result<String, String> {
    let out = almanac(["cluster", "status", "--cluster", conninfo]).run();
    if out.code == Some(0) {
        Ok(out.stdout)
    } else {
        Err(out.stderr)
    }
}

fn write_file(pg: &Postgres, name: &str, contents: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let path = pg.path(name);
    std::fs::write(&path, contents).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    path
}

#[test]
fn each_sslmode_checks_what_it_promises_and_says_what_failed() {
    let ca = Ca::new("almanac test CA");
    let pg = tls_server(&ca);
    let root = write_file(&pg, "root.crt", &ca.pem);
    let other = write_file(&pg, "other.crt", &Ca::new("someone else's CA").pem);
    let at = |host: &str, settings: &str| format!("{} {settings}", pg.tcp_url(host));

    // verify-full: signed by the CA and issued for the host name.
    let ok = status(&at(
        "localhost",
        &format!("sslmode=verify-full sslrootcert={root}"),
    ));
    assert!(
        ok.as_deref().is_ok_and(|s| s.contains("log head")),
        "{ok:?}"
    );
    // The same in URL form.
    let url = format!(
        "postgres://postgres@localhost:{}/postgres?sslmode=verify-full&sslrootcert={root}",
        pg.port()
    );
    assert!(status(&url).is_ok(), "{:?}", status(&url));
    // Another CA's signature is not trusted.
    let err = status(&at(
        "localhost",
        &format!("sslmode=verify-full sslrootcert={other}"),
    ))
    .unwrap_err();
    assert!(err.contains("not trusted"), "{err}");
    let err = status(&at(
        "localhost",
        &format!("sslmode=verify-ca sslrootcert={other}"),
    ))
    .unwrap_err();
    assert!(err.contains("not trusted"), "{err}");
    // The certificate is for localhost: by address, verify-full refuses it, verify-ca does not
    // look at names.
    let err = status(&at(
        "127.0.0.1",
        &format!("sslmode=verify-full sslrootcert={root}"),
    ))
    .unwrap_err();
    assert!(
        err.contains("not for host") && err.contains("localhost"),
        "{err}"
    );
    assert!(status(&at(
        "127.0.0.1",
        &format!("sslmode=verify-ca sslrootcert={root}")
    ))
    .is_ok());
    // require and prefer encrypt without checking (unless a root is given).
    assert!(status(&at("127.0.0.1", "sslmode=require")).is_ok());
    assert!(status(&at("127.0.0.1", "")).is_ok());
    let err = status(&at(
        "localhost",
        &format!("sslmode=require sslrootcert={other}"),
    ))
    .unwrap_err();
    assert!(err.contains("not trusted"), "{err}");
    // Without TLS this server refuses: PostgreSQL's own reason is shown.
    let err = status(&at("localhost", "sslmode=disable")).unwrap_err();
    assert!(
        err.contains("pg_hba.conf") && err.contains("no encryption"),
        "{err}"
    );
    // Settings that cannot work are refused before connecting.
    let err = status(&at("localhost", "sslmode=verify_full")).unwrap_err();
    assert!(err.contains("sslmode \"verify_full\""), "{err}");
    let err = status(&at(
        "localhost",
        "sslmode=verify-full sslrootcert=/nonexistent.crt",
    ))
    .unwrap_err();
    assert!(err.contains("/nonexistent.crt"), "{err}");
    let err = status(&at("localhost", &format!("sslcert={root}"))).unwrap_err();
    assert!(err.contains("sslcert and sslkey"), "{err}");
    // The system's roots vouch for any public certificate: only with the host name checked.
    let err = status(&at("localhost", "sslmode=verify-ca")).unwrap_err();
    assert!(err.contains("verify-ca needs sslrootcert"), "{err}");
    let err = status(&at("localhost", "sslmode=require sslrootcert=system")).unwrap_err();
    assert!(err.contains("needs sslmode=verify-full"), "{err}");
    let err = status(&format!("=x {}", pg.tcp_url("localhost"))).unwrap_err();
    assert!(err.contains("without a key"), "{err}");
    // An address without a host name is still TLS (and cannot be checked against a name).
    let by_address = format!(
        "hostaddr=127.0.0.1 port={} user=postgres dbname=postgres sslmode=verify-ca sslrootcert={root}",
        pg.port()
    );
    let err = status(&by_address).unwrap_err();
    assert!(!err.contains("no encryption"), "{err}");
}

#[test]
fn a_client_certificate_is_sent_when_the_server_asks_for_one() {
    let ca = Ca::new("almanac test CA");
    let pg = tls_server(&ca);
    let root = write_file(&pg, "root.crt", &ca.pem);
    let (cert, key) = ca.issue("certified", &[], true);
    let (cert, key) = (
        write_file(&pg, "client.crt", &cert),
        write_file(&pg, "client.key", &key),
    );
    let base = format!(
        "host=localhost port={} user=certified dbname=postgres sslmode=verify-full sslrootcert={root}",
        pg.port()
    );
    let err = status(&base).unwrap_err();
    assert!(err.contains("requires a valid client certificate"), "{err}");
    let with = format!("{base} sslcert={cert} sslkey={key}");
    assert!(status(&with).is_ok(), "{:?}", status(&with));
    // Someone else's certificate is refused by the server.
    let (wrong_cert, wrong_key) = Ca::new("someone else's CA").issue("certified", &[], true);
    let wrong = format!(
        "{base} sslcert={} sslkey={}",
        write_file(&pg, "wrong.crt", &wrong_cert),
        write_file(&pg, "wrong.key", &wrong_key)
    );
    let err = status(&wrong).unwrap_err();
    assert!(err.contains("refused the client certificate"), "{err}");
}

#[test]
fn require_fails_clearly_against_a_server_without_tls() {
    let mut pg = Postgres::init();
    pg.listen_tcp(
        &["ssl = off".to_string()],
        "local all all trust\nhost all all 127.0.0.1/32 trust\n",
    );
    pg.start_again();
    let err = status(&format!("{} sslmode=require", pg.tcp_url("127.0.0.1"))).unwrap_err();
    assert!(err.contains("does not offer TLS"), "{err}");
    // prefer falls back to an unencrypted connection, as libpq does.
    assert!(status(&format!("{} sslmode=prefer", pg.tcp_url("127.0.0.1"))).is_ok());
}

#[test]
fn nodes_serve_and_share_writes_through_tls() {
    let ca = Ca::new("almanac test CA");
    let pg = tls_server(&ca);
    let root = write_file(&pg, "root.crt", &ca.pem);
    let conninfo = format!(
        "{} sslmode=verify-full sslrootcert={root}",
        pg.tcp_url("localhost")
    );
    let tmp = tempfile::tempdir().unwrap();
    let start = |name: &str| {
        Server::start(
            serve_cmd(&tmp.path().join(name)).args([
                "--public-url",
                PUBLIC,
                "--cluster",
                &conninfo,
            ]),
            Some(PUBLIC),
            "node",
        )
    };
    let (mut a, mut b) = (start("a"), start("b"));
    let password = a
        .initial_admin_password
        .clone()
        .expect("the first node of an empty cluster creates the administrator");
    let created = a
        .req("POST", &format!("{NS}/events"))
        .auth("admin", &password)
        .json_body(
            &json!({"title": "Over TLS", "start_date": "2027-05-01 10:00:00",
                      "end_date": "2027-05-01 11:00:00", "status": "publish"}),
        )
        .send();
    assert_eq!(created.status, 201, "{}", created.describe());
    let id = created.json()["id"].as_u64().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let r = b.get(&format!("{NS}/events/{id}"));
        if r.status == 200 {
            assert_eq!(r.json()["title"], "Over TLS");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{}", r.describe());
        std::thread::sleep(Duration::from_millis(100));
    }
    a.stop(Duration::from_secs(20));
    b.stop(Duration::from_secs(20));
}
