//! TLS as redis-server configures it (`tls-port`, `tls-cert-file`, `tls-key-file`,
//! `tls-ca-cert-file`/`tls-ca-cert-dir`, `tls-auth-clients`, `tls-protocols`), with rustls:
//! [`acceptor`] turns the configuration into a `TlsAcceptor` the listeners hand each accepted
//! socket to. `tls-replication` and `tls-cluster` are accepted and ignored (no replicas, no
//! cluster). Errors carry redis-server's texts where it has one.

use crate::config::Config;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig};
use std::io::BufReader;
use std::sync::Arc;
pub use tokio_rustls::TlsAcceptor;

/// The TLS acceptor for `config`, or None when `tls-port` is 0.
pub fn acceptor(config: &Config) -> Result<Option<TlsAcceptor>, String> {
    if config.tls_port == 0 {
        return Ok(None);
    }
    let (Some(cert_file), Some(key_file)) = (&config.tls_cert_file, &config.tls_key_file) else {
        return Err("Failed to configure TLS. Check logs for more info.".into());
    };
    let certs = read_certs(cert_file)?;
    let key = read_key(key_file)?;
    // tls-auth-clients: 0 no, 1 yes (the default), 2 optional.
    let auth = config
        .get("tls-auth-clients")
        .unwrap_or_else(|| "yes".into());
    let builder = ServerConfig::builder_with_protocol_versions(&protocols(config)?);
    let builder = if auth == "no" {
        builder.with_no_client_auth()
    } else {
        let mut roots = RootCertStore::empty();
        let mut any = false;
        if let Some(ca) = &config.tls_ca_cert_file {
            for c in read_certs(ca)? {
                roots
                    .add(c)
                    .map_err(|e| format!("Failed to load CA certificate(s) file: {e}"))?;
                any = true;
            }
        }
        if let Some(dir) = &config.tls_ca_cert_dir {
            for entry in std::fs::read_dir(dir)
                .map_err(|e| format!("Failed to configure CA certificate(s) file/directory: {e}"))?
            {
                let path = entry.map_err(|e| e.to_string())?.path();
                if let Ok(certs) = read_certs(&path.to_string_lossy()) {
                    for c in certs {
                        any |= roots.add(c).is_ok();
                    }
                }
            }
        }
        if !any {
            return Err("Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, tls-replication or tls-auth-clients are enabled!".into());
        }
        let verifier = WebPkiClientVerifier::builder(Arc::new(roots));
        let verifier = if auth == "optional" {
            verifier.allow_unauthenticated()
        } else {
            verifier
        };
        let verifier = verifier
            .build()
            .map_err(|e| format!("Failed to configure TLS: {e}"))?;
        builder.with_client_cert_verifier(verifier)
    };
    let mut server = builder
        .with_single_cert(certs, key)
        .map_err(|e| format!("Failed to load private key: {e}"))?;
    server.alpn_protocols.clear();
    Ok(Some(TlsAcceptor::from(Arc::new(server))))
}

/// tls-protocols ("TLSv1.2 TLSv1.3" when unset; rustls has no TLSv1 or TLSv1.1).
fn protocols(config: &Config) -> Result<Vec<&'static rustls::SupportedProtocolVersion>, String> {
    let text = config.get("tls-protocols").unwrap_or_default();
    if text.trim().is_empty() {
        return Ok(vec![&rustls::version::TLS13, &rustls::version::TLS12]);
    }
    let mut out = Vec::new();
    for p in text.split_whitespace() {
        match p.to_ascii_lowercase().as_str() {
            "tlsv1.2" => out.push(&rustls::version::TLS12),
            "tlsv1.3" => out.push(&rustls::version::TLS13),
            "tlsv1" | "tlsv1.1" => {}
            _ => return Err("Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', 'TLSv1.2' and 'TLSv1.3'.".to_string()),
        }
    }
    if out.is_empty() {
        return Err("Failed to configure TLS: no supported protocol in tls-protocols".into());
    }
    Ok(out)
}

fn read_certs(path: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let f = std::fs::File::open(path)
        .map_err(|e| format!("Failed to load certificate: {path}: {e}"))?;
    rustls_pemfile::certs(&mut BufReader::new(f))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("Failed to load certificate: {path}: {e}"))
}

fn read_key(path: &str) -> Result<PrivateKeyDer<'static>, String> {
    let f = std::fs::File::open(path)
        .map_err(|e| format!("Failed to load private key: {path}: {e}"))?;
    rustls_pemfile::private_key(&mut BufReader::new(f))
        .map_err(|e| format!("Failed to load private key: {path}: {e}"))?
        .ok_or_else(|| format!("Failed to load private key: {path}: no key found"))
}
