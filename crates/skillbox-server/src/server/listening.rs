//! Binding, serving connections with their time limits, and shutting down with a grace period.

use super::*;

/// Why the server refused to start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// Listening beyond loopback without a token.
    #[error(
        "refusing to listen on {0} without a token: anyone who can reach it could run skills; pass --token (or SKILLBOX_TOKEN), or listen on 127.0.0.1"
    )]
    TokenRequired(SocketAddr),
    /// The web app could not be set up.
    #[error("cannot set up the web app: {0}")]
    Web(String),
    /// The address could not be bound.
    #[error("cannot listen on {address}: {message}")]
    Bind {
        /// The address.
        address: SocketAddr,
        /// Why.
        message: String,
    },
}

/// Check the listening rule: beyond loopback a token is required.
///
/// # Errors
/// [`ServeError::TokenRequired`].
pub fn check_listen(address: SocketAddr, token: Option<&str>) -> Result<(), ServeError> {
    if !address.ip().is_loopback() && token.is_none_or(str::is_empty) {
        return Err(ServeError::TokenRequired(address));
    }
    Ok(())
}

/// How long requests in flight may take to finish after shutdown is asked for. A client that
/// never completes its request (a half-sent header, say) cannot hold shutdown longer than this.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(20);
/// How long to wait before accepting again when accepting fails for want of resources (too
/// many open files, say).
const ACCEPT_RETRY_DELAY: Duration = Duration::from_millis(100);

/// Serve on an already bound listener until `shutdown` resolves, then let requests in flight
/// finish for at most [`SHUTDOWN_GRACE`]. Serving does not fail: a failed accept is logged and
/// retried, a failed connection logged.
pub async fn serve_on(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) {
    serve_with_grace(listener, state, shutdown, SHUTDOWN_GRACE).await;
}

/// [`serve_on`] with a chosen grace period.
///
/// Each connection is served by hyper's HTTP/1 server with the state's header-read timeout,
/// so a client that sends its request line or headers slowly (or not at all) is disconnected
/// instead of holding the connection forever; and a client that stops reading its answer is
/// disconnected after the send-stall timeout, which frees the answer.
pub async fn serve_with_grace(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    grace: Duration,
) {
    let send_stall_timeout = state.send_stall_timeout;
    // Only the token throttle reads a request's address: without a token, none is recorded.
    let records_addresses = state.token.is_some();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(state.header_read_timeout);
    let app = router(state);
    let connections = hyper_util::server::graceful::GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    tracing::warn!(%error, "cannot accept a connection");
                    tokio::time::sleep(ACCEPT_RETRY_DELAY).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        // With a token, each request carries its connection's address (`ConnectInfo`), which
        // the token throttle counts wrong tokens by.
        let service = tower::ServiceExt::map_request(
            app.clone(),
            move |mut request: axum::http::Request<hyper::body::Incoming>| {
                if records_addresses {
                    request
                        .extensions_mut()
                        .insert(axum::extract::ConnectInfo(peer));
                }
                request
            },
        );
        let connection = http.serve_connection(
            hyper_util::rt::TokioIo::new(StallTimeout::new(stream, send_stall_timeout)),
            hyper_util::service::TowerToHyperService::new(service),
        );
        let connection = connections.watch(connection);
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%error, "connection ended with an error");
            }
        });
    }
    drop(listener);
    tokio::select! {
        () = connections.shutdown() => {}
        () = tokio::time::sleep(grace) => {
            tracing::warn!(grace_seconds = grace.as_secs(), "requests still open after the shutdown grace period were dropped");
        }
    }
}

/// Bind `address` after checking the token rule.
///
/// # Errors
/// Token rule or bind failure.
pub async fn bind(
    address: SocketAddr,
    token: Option<&str>,
) -> Result<tokio::net::TcpListener, ServeError> {
    check_listen(address, token)?;
    tokio::net::TcpListener::bind(address)
        .await
        .map_err(|error| ServeError::Bind {
            address,
            message: error.to_string(),
        })
}

/// Serve a bound listener until SIGINT or SIGTERM, sweeping expired blobs meanwhile.
pub async fn serve_listener(listener: tokio::net::TcpListener, state: AppState) {
    let blobs = state.services.blobs().clone();
    let sweeper = tokio::spawn(async move {
        let mut interval = tokio::time::interval(BLOB_SWEEP_INTERVAL);
        loop {
            interval.tick().await;
            match blobs.sweep().await {
                Ok(0) => {}
                Ok(removed) => tracing::info!(removed, "expired blobs removed"),
                Err(error) => tracing::warn!(%error, "blob sweep failed"),
            }
        }
    });
    let mcp_shutdown = state.mcp.as_ref().map(|door| door.shutdown.clone());
    #[cfg(feature = "web")]
    let web = state.web.clone();
    let shutdown = async move {
        shutdown_signal().await;
        // Open MCP and web event streams would hold the graceful shutdown forever.
        if let Some(mcp_shutdown) = mcp_shutdown {
            mcp_shutdown.cancel();
        }
        #[cfg(feature = "web")]
        if let Some(web) = web {
            web.shutdown();
        }
    };
    serve_on(listener, state, shutdown).await;
    sweeper.abort();
}

/// Bind `address` (after the token rule) and serve until SIGINT or SIGTERM.
///
/// # Errors
/// Token rule or bind failure.
pub async fn serve(address: SocketAddr, state: AppState) -> Result<(), ServeError> {
    let listener = bind(address, state.token()).await?;
    serve_listener(listener, state).await;
    Ok(())
}

async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = interrupt => {}
        () = terminate => {}
    }
    tracing::info!("shutting down: finishing requests in flight");
}
