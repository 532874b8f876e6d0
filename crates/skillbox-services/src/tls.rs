//! The TLS crypto provider of every HTTPS client skillbox builds (the model clients, the S3,
//! GCS and Azure blob stores): rustls with ring. Installed once per process before the first
//! client is built; ring builds without cmake, where aws-lc-rs (reqwest's default) does not.

/// Make ring the process's rustls crypto provider, unless one is installed already. Cheap
/// after the first call; call it before building any HTTPS client.
pub fn install_crypto_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Another thread may have installed one meanwhile: either is ring.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}
