//! The `tls-port` listener end to end, with certificates generated in the test (rcgen): a
//! Rust client (rustls) and `redis-cli --tls` get Redis's replies over TLS, and with
//! `tls-auth-clients yes` a client without a certificate is not served.

use resplock::Config;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use std::path::PathBuf;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

struct Pki {
    dir: PathBuf,
    ca_der: CertificateDer<'static>,
    client_der: CertificateDer<'static>,
    client_key: Vec<u8>,
}

fn pki() -> Pki {
    let dir = std::env::temp_dir().join(format!("resplock-tls-listener-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    // OpenSSL (redis-cli) accepts a CA only with these usages.
    params.key_usages = vec![
        rcgen::KeyUsagePurpose::KeyCertSign,
        rcgen::KeyUsagePurpose::CrlSign,
        rcgen::KeyUsagePurpose::DigitalSignature,
    ];
    // Distinct names: OpenSSL takes a certificate whose subject is its issuer's for self-signed.
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "resplock test CA");
    let ca = params.self_signed(&ca_key).unwrap();
    std::fs::write(dir.join("ca.crt"), ca.pem()).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params =
        rcgen::CertificateParams::new(vec!["localhost".into(), "127.0.0.1".into()]).unwrap();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "localhost");
    let cert = params.signed_by(&key, &ca, &ca_key).unwrap();
    std::fs::write(dir.join("server.crt"), cert.pem()).unwrap();
    std::fs::write(dir.join("server.key"), key.serialize_pem()).unwrap();
    let ckey = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(vec!["client".into()]).unwrap();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "client");
    let ccert = params.signed_by(&ckey, &ca, &ca_key).unwrap();
    std::fs::write(dir.join("client.crt"), ccert.pem()).unwrap();
    std::fs::write(dir.join("client.key"), ckey.serialize_pem()).unwrap();
    Pki {
        dir,
        ca_der: ca.der().clone(),
        client_der: ccert.der().clone(),
        client_key: ckey.serialize_der(),
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn config(p: &Pki, tls_port: u16) -> Config {
    let mut c = Config::ephemeral();
    let path = |f: &str| p.dir.join(f).to_string_lossy().into_owned();
    let (cert, key, ca, port) = (
        path("server.crt"),
        path("server.key"),
        path("ca.crt"),
        tls_port.to_string(),
    );
    c.set_many(&[
        (b"tls-port".as_slice(), port.as_bytes()),
        (b"tls-cert-file".as_slice(), cert.as_bytes()),
        (b"tls-key-file".as_slice(), key.as_bytes()),
        (b"tls-ca-cert-file".as_slice(), ca.as_bytes()),
    ])
    .unwrap();
    c
}

async fn ping_over_tls(p: &Pki, port: u16, with_cert: bool) -> Option<String> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(p.ca_der.clone()).unwrap();
    let b = rustls::ClientConfig::builder().with_root_certificates(roots);
    let cfg = if with_cert {
        b.with_client_auth_cert(
            vec![p.client_der.clone()],
            PrivateKeyDer::try_from(p.client_key.clone()).unwrap(),
        )
        .unwrap()
    } else {
        b.with_no_client_auth()
    };
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .ok()?;
    let connector = tokio_rustls::TlsConnector::from(Arc::new(cfg));
    let name = ServerName::try_from("localhost").unwrap();
    let mut s = connector.connect(name, tcp).await.ok()?;
    s.write_all(b"*1\r\n$4\r\nPING\r\n").await.ok()?;
    let mut buf = vec![0u8; 64];
    let n = tokio::time::timeout(std::time::Duration::from_secs(5), s.read(&mut buf))
        .await
        .ok()?
        .ok()?;
    Some(String::from_utf8_lossy(&buf[..n]).into_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_port_serves_clients_with_a_certificate_and_refuses_others() {
    let p = pki();
    let port = free_port();
    let server = resplock::start(config(&p, port)).await.unwrap();
    assert_eq!(
        ping_over_tls(&p, port, true).await.as_deref(),
        Some("+PONG\r\n")
    );
    // tls-auth-clients yes (the default): no certificate, no reply.
    assert_eq!(ping_over_tls(&p, port, false).await, None);
    // redis-cli --tls, where it was built with TLS.
    let path = |f: &str| p.dir.join(f).to_string_lossy().into_owned();
    let out = tokio::process::Command::new("redis-cli")
        .args(["--tls", "--cacert", &path("ca.crt")])
        .args(["--cert", &path("client.crt"), "--key", &path("client.key")])
        .args(["-h", "127.0.0.1", "-p", &port.to_string(), "PING"])
        .output()
        .await;
    match out {
        Ok(o) if String::from_utf8_lossy(&o.stderr).contains("not supported") => {
            println!("redis-cli without TLS support: skipped its check")
        }
        Ok(o) => assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            "PONG\n",
            "{}",
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => println!("redis-cli not run ({e}): skipped its check"),
    }
    server.state().shutdown.cancel();
    let _ = std::fs::remove_dir_all(&p.dir);
}
