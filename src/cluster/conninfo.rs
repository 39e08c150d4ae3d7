//! The cluster's connection string as libpq users write it — `key=value` pairs or a
//! `postgres://` URL, several hosts, `target_session_attrs` — with libpq's TLS settings
//! (`sslmode`, `sslrootcert`, `sslcert`, `sslkey`), which the `postgres` crate does not read:
//! they are taken out here and become a rustls client configuration.
//!
//! | `sslmode`          | encrypted             | server certificate checked                  |
//! |--------------------|-----------------------|---------------------------------------------|
//! | `disable`          | never                 | —                                           |
//! | `prefer` (default) | when the server can   | against `sslrootcert` when it is given      |
//! | `require`          | always                | against `sslrootcert` when it is given      |
//! | `verify-ca`        | always                | signed by `sslrootcert` (which it needs)    |
//! | `verify-full`      | always                | signed by `sslrootcert` (else the system's  |
//! |                    |                       | roots), and issued for the host name        |
//!
//! As in libpq, TLS settings do not apply to Unix-domain sockets.

use postgres::config::{Host, SslMode};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{verify_server_cert_signed_by_trust_anchor, WebPkiServerVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use std::str::FromStr;
use std::sync::Arc;

/// A parsed connection string: the `postgres` crate's configuration and how to use TLS.
pub(crate) struct ConnInfo {
    pub config: postgres::Config,
    pub tls: Option<ClientConfig>,
}

/// libpq's `sslmode` values that almanac implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

/// The TLS keys libpq reads and the `postgres` crate refuses.
#[derive(Debug, Default)]
struct TlsKeys {
    mode: Option<String>,
    root_cert: Option<String>,
    cert: Option<String>,
    key: Option<String>,
}

impl TlsKeys {
    /// Takes `key` when it is one of ours.
    fn take(&mut self, key: &str, value: &str) -> bool {
        let slot = match key {
            "sslmode" => &mut self.mode,
            "sslrootcert" => &mut self.root_cert,
            "sslcert" => &mut self.cert,
            "sslkey" => &mut self.key,
            _ => return false,
        };
        *slot = Some(value.to_string());
        true
    }
}

/// Reads a connection string (`key=value …` or `postgres://…`); the TLS files it names are
/// read now, so a changed certificate is used at the next connection.
pub(crate) fn parse(text: &str) -> Result<ConnInfo, String> {
    let mut keys = TlsKeys::default();
    let rest = if text.starts_with("postgres://") || text.starts_with("postgresql://") {
        url_without_tls_keys(text, &mut keys)?
    } else {
        pairs_without_tls_keys(text, &mut keys)?
    };
    let mut config = postgres::Config::from_str(&rest)
        .map_err(|e| format!("the connection string is not valid: {}", describe(&e)))?;
    let mode = match keys.mode.as_deref() {
        None | Some("prefer") => Mode::Prefer,
        Some("disable") => Mode::Disable,
        Some("require") => Mode::Require,
        Some("verify-ca") => Mode::VerifyCa,
        Some("verify-full") => Mode::VerifyFull,
        Some(other) => {
            return Err(format!(
                "sslmode \"{other}\" is not one of disable, prefer, require, verify-ca, verify-full"
            ))
        }
    };
    let hosts = config.get_hosts();
    let sockets_only = !hosts.is_empty()
        && hosts.iter().all(|h| matches!(h, Host::Unix(_)))
        && config.get_hostaddrs().is_empty();
    if mode == Mode::Disable || sockets_only {
        config.ssl_mode(SslMode::Disable);
        return Ok(ConnInfo { config, tls: None });
    }
    config.ssl_mode(if mode == Mode::Prefer {
        SslMode::Prefer
    } else {
        SslMode::Require
    });
    let tls = client_config(mode, &keys)?;
    Ok(ConnInfo {
        config,
        tls: Some(tls),
    })
}

/// The rustls configuration of a mode: what is trusted, what is checked, the client's
/// certificate.
fn client_config(mode: Mode, keys: &TlsKeys) -> Result<ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS cannot be set up: {e}"))?;
    // The system's roots vouch for any public certificate: only a host name check makes them
    // mean something (libpq refuses `sslrootcert=system` below verify-full too).
    let roots = match (keys.root_cert.as_deref(), mode) {
        (Some(path), _) if path != "system" => Some(file_roots(path)?),
        (_, Mode::VerifyFull) => Some(system_roots()?),
        (None, Mode::VerifyCa) => {
            return Err(
                "sslmode=verify-ca needs sslrootcert (a CA file): any public \
                        certificate would pass against the system's roots; or use verify-full"
                    .into(),
            )
        }
        (Some(_), _) => return Err("sslrootcert=system needs sslmode=verify-full".into()),
        (None, _) => None,
    };
    let verifier: Arc<dyn ServerCertVerifier> = match (roots, mode) {
        (Some(roots), Mode::VerifyFull) => {
            WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                .build()
                .map_err(|e| format!("the trusted certificates cannot be used: {e}"))?
        }
        (roots, _) => Arc::new(WithoutName {
            roots: roots.map(Arc::new),
            provider: provider.clone(),
        }),
    };
    let builder = builder
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    let mut config = match (&keys.cert, &keys.key) {
        (Some(cert), Some(key)) => {
            let certs = CertificateDer::pem_file_iter(cert)
                .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
                .map_err(|e| format!("sslcert \"{cert}\" cannot be read: {e}"))?;
            let key = PrivateKeyDer::from_pem_file(key)
                .map_err(|e| format!("sslkey \"{key}\" cannot be read: {e}"))?;
            builder
                .with_client_auth_cert(certs, key)
                .map_err(|e| format!("the client certificate cannot be used: {e}"))?
        }
        (None, None) => builder.with_no_client_auth(),
        _ => return Err("sslcert and sslkey go together: give both or neither".into()),
    };
    config.alpn_protocols = vec![b"postgresql".to_vec()];
    Ok(config)
}

fn file_roots(path: &str) -> Result<RootCertStore, String> {
    let unreadable =
        |e: &dyn std::fmt::Display| format!("sslrootcert \"{path}\" cannot be read: {e}");
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(path).map_err(|e| unreadable(&e))? {
        roots
            .add(cert.map_err(|e| unreadable(&e))?)
            .map_err(|e| unreadable(&e))?;
    }
    if roots.is_empty() {
        return Err(format!("sslrootcert \"{path}\" holds no certificate"));
    }
    Ok(roots)
}

fn system_roots() -> Result<RootCertStore, String> {
    let mut roots = RootCertStore::empty();
    roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
    if roots.is_empty() {
        return Err("the system has no trusted root certificates: give sslrootcert".into());
    }
    Ok(roots)
}

/// `key=value` pairs (values bare or single-quoted, with backslash escapes) without ours,
/// written back quoted.
fn pairs_without_tls_keys(text: &str, keys: &mut TlsKeys) -> Result<String, String> {
    let mut rest = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.peek().is_none() {
            break;
        }
        let mut key = String::new();
        while let Some(c) = chars.next_if(|c| *c != '=' && !c.is_whitespace()) {
            key.push(c);
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if key.is_empty() {
            return Err("the connection string has a value without a key".into());
        }
        if chars.next() != Some('=') {
            return Err(format!(
                "the connection string has \"{key}\" without a value"
            ));
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let mut value = String::new();
        if chars.next_if_eq(&'\'').is_some() {
            loop {
                match chars.next() {
                    Some('\\') => value.extend(chars.next()),
                    Some('\'') => break,
                    Some(c) => value.push(c),
                    None => return Err(format!("the value of \"{key}\" has no closing quote")),
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                if c == '\\' {
                    value.extend(chars.next());
                } else {
                    value.push(c);
                }
            }
        }
        if !keys.take(&key, &value) {
            let quoted = value.replace('\\', "\\\\").replace('\'', "\\'");
            rest.push(format!("{key}='{quoted}'"));
        }
    }
    Ok(rest.join(" "))
}

/// A `postgres://` URL without our query parameters.
fn url_without_tls_keys(text: &str, keys: &mut TlsKeys) -> Result<String, String> {
    let Some((base, query)) = text.split_once('?') else {
        return Ok(text.to_string());
    };
    let mut rest = Vec::new();
    for param in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = param.split_once('=').unwrap_or((param, ""));
        let decode = |s: &str| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8()
                .map(|s| s.into_owned())
                .map_err(|_| format!("the URL's parameter \"{param}\" is not UTF-8"))
        };
        if !keys.take(&decode(key)?, &decode(value)?) {
            rest.push(param);
        }
    }
    Ok(if rest.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", rest.join("&"))
    })
}

/// The server's certificate without its host name: signed by one of `roots` (verify-ca, or
/// require and prefer with `sslrootcert`), or not checked at all (require and prefer without
/// it, as in libpq: encrypted, which protects against eavesdropping, not against a server in
/// the middle). The handshake's signatures are checked either way.
#[derive(Debug)]
struct WithoutName {
    roots: Option<Arc<RootCertStore>>,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for WithoutName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if let Some(roots) = &self.roots {
            verify_server_cert_signed_by_trust_anchor(
                &ParsedCertificate::try_from(end_entity)?,
                roots,
                intermediates,
                now,
                self.provider.signature_verification_algorithms.all,
            )?;
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        verify_tls12_signature(message, cert, dss, algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        verify_tls13_signature(message, cert, dss, algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// What went wrong, in words: the `postgres` crate's errors say only their kind ("error
/// performing TLS handshake", "db error"), their causes say what.
pub(crate) fn describe(error: &postgres::Error) -> String {
    if let Some(db) = error.as_db_error() {
        return format!("{} ({})", db.message(), db.code().code());
    }
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(error);
    while let Some(cause) = source {
        // An I/O error's source skips the error it wraps: rustls' is reached through it.
        let inner = cause
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            .map(|e| e as &(dyn std::error::Error + 'static));
        if let Some(tls) = inner
            .or(Some(cause))
            .and_then(|e| e.downcast_ref::<rustls::Error>())
        {
            return tls_problem(tls);
        }
        let text = cause.to_string();
        if text == "server does not support TLS" {
            return "the server does not offer TLS, and sslmode asks for it".into();
        }
        if text == "database does not allow writes" {
            return "no server accepts writes (target_session_attrs=read-write)".into();
        }
        if inner.is_none() && std::error::Error::source(cause).is_none() {
            return format!("{error}: {text}");
        }
        source = inner.or_else(|| std::error::Error::source(cause));
    }
    error.to_string()
}

fn tls_problem(error: &rustls::Error) -> String {
    use rustls::AlertDescription as Alert;
    match error {
        rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer) => {
            "the server's certificate is not trusted: no certificate of sslrootcert (or of the \
             system's roots) signed it"
                .into()
        }
        rustls::Error::InvalidCertificate(CertificateError::NotValidForNameContext {
            expected,
            presented,
        }) => format!(
            "the server's certificate is not for host {expected:?} (it names {}): check the \
             host name, or use sslmode=verify-ca",
            presented.join(", ")
        ),
        rustls::Error::InvalidCertificate(CertificateError::NotValidForName) => {
            "the server's certificate is not for this host name: check the host name, or use \
             sslmode=verify-ca"
                .into()
        }
        rustls::Error::AlertReceived(
            Alert::CertificateRequired | Alert::BadCertificate | Alert::UnknownCA,
        ) => "the server refused the client certificate (sslcert/sslkey)".into(),
        other => format!("TLS: {other}"),
    }
}
