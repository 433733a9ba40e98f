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

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::pki_types::ServerName;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    struct Pki {
        dir: std::path::PathBuf,
        ca: rcgen::Certificate,
        ca_key: rcgen::KeyPair,
    }

    fn pki(tag: &str) -> Pki {
        let dir = std::env::temp_dir().join(format!("resplock-tls-{}-{tag}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let ca = params.self_signed(&ca_key).unwrap();
        std::fs::write(dir.join("ca.crt"), ca.pem()).unwrap();
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec!["localhost".to_string()])
            .unwrap()
            .signed_by(&key, &ca, &ca_key)
            .unwrap();
        std::fs::write(dir.join("server.crt"), cert.pem()).unwrap();
        std::fs::write(dir.join("server.key"), key.serialize_pem()).unwrap();
        Pki { dir, ca, ca_key }
    }

    fn config(p: &Pki, auth: &str) -> Config {
        let mut c = Config::ephemeral();
        c.tls_port = 1;
        let path = |f: &str| Some(p.dir.join(f).to_string_lossy().into_owned());
        c.tls_cert_file = path("server.crt");
        c.tls_key_file = path("server.key");
        c.tls_ca_cert_file = path("ca.crt");
        c.set_many(&[(b"tls-auth-clients".as_slice(), auth.as_bytes())])
            .unwrap();
        c
    }

    async fn handshake(acceptor: TlsAcceptor, client: rustls::ClientConfig) -> bool {
        let (a, b) = tokio::io::duplex(1 << 16);
        let server = tokio::spawn(async move {
            let mut s = acceptor.accept(a).await.ok()?;
            let mut buf = [0u8; 4];
            s.read_exact(&mut buf).await.ok()?;
            s.write_all(&buf).await.ok()?;
            s.flush().await.ok()
        });
        let connector = tokio_rustls::TlsConnector::from(Arc::new(client));
        let name = ServerName::try_from("localhost").unwrap();
        let ok = async {
            let mut c = connector.connect(name, b).await.ok()?;
            c.write_all(b"PING").await.ok()?;
            let mut buf = [0u8; 4];
            c.read_exact(&mut buf).await.ok()?;
            (&buf == b"PING").then_some(())
        }
        .await
        .is_some();
        ok && server.await.ok().flatten().is_some()
    }

    fn client(p: &Pki, with_cert: bool) -> rustls::ClientConfig {
        let mut roots = RootCertStore::empty();
        roots.add(p.ca.der().clone()).unwrap();
        let b = rustls::ClientConfig::builder().with_root_certificates(roots);
        if !with_cert {
            return b.with_no_client_auth();
        }
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec!["client".to_string()])
            .unwrap()
            .signed_by(&key, &p.ca, &p.ca_key)
            .unwrap();
        b.with_client_auth_cert(
            vec![cert.der().clone()],
            PrivateKeyDer::try_from(key.serialize_der()).unwrap(),
        )
        .unwrap()
    }

    #[tokio::test]
    async fn tls_auth_clients_decides_whether_a_client_certificate_is_required() {
        let p = pki("auth");
        let yes = acceptor(&config(&p, "yes")).unwrap().unwrap();
        assert!(handshake(yes.clone(), client(&p, true)).await);
        assert!(!handshake(yes, client(&p, false)).await);
        let optional = acceptor(&config(&p, "optional")).unwrap().unwrap();
        assert!(handshake(optional.clone(), client(&p, false)).await);
        assert!(handshake(optional, client(&p, true)).await);
        let no = acceptor(&config(&p, "no")).unwrap().unwrap();
        assert!(handshake(no, client(&p, false)).await);
        let _ = std::fs::remove_dir_all(&p.dir);
    }

    #[test]
    fn no_tls_port_no_acceptor_and_missing_ca_is_redis_s_error() {
        assert!(acceptor(&Config::ephemeral()).unwrap().is_none());
        let p = pki("ca");
        let mut c = config(&p, "yes");
        c.tls_ca_cert_file = None;
        assert_eq!(
            acceptor(&c).err().unwrap(),
            "Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, tls-replication or tls-auth-clients are enabled!"
        );
        let _ = std::fs::remove_dir_all(&p.dir);
    }
}
