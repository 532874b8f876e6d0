//! The HTTP/1.1 plumbing the test servers share ([`crate::git_server::GitHttpServer`],
//! [`crate::static_server::StaticServer`]): hyper on a 127.0.0.1 listener with port 0, run on
//! the testkit's runtime, every request recorded, and the listener and its connections dropped
//! when the server is.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::{Body, Frame, Incoming, SizeHint};

/// How long the accept loop waits after a failed accept (out of file descriptors) before the
/// next one, so it does not spin.
const ACCEPT_RETRY_DELAY: Duration = Duration::from_millis(50);

/// A request one of the test servers received, with the status it was answered with: what a
/// test checks the client sent (a token or none, a `Range`, a `Git-Protocol`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceivedRequest {
    /// The method: `GET`, `HEAD`, `POST`.
    pub method: String,
    /// The path, percent-encoded as sent, without the query.
    pub path: String,
    /// The query (after `?`), when there is one.
    pub query: Option<String>,
    /// The headers in the order received, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The status the server answered with.
    pub status: u16,
}

impl ReceivedRequest {
    /// The value of the header `name` (any case), the first when repeated.
    #[must_use]
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// The `Authorization` header, as sent.
    #[must_use]
    pub fn authorization(&self) -> Option<&str> {
        self.header("authorization")
    }
}

/// A response body: all at once, or pieces sent by a task (a slow download).
#[derive(Debug)]
pub(crate) enum ResponseBody {
    /// The whole body (`None` once sent).
    Full(Option<Bytes>),
    /// Pieces as they come; the body ends when the sender is dropped.
    Pieces(tokio::sync::mpsc::Receiver<Bytes>),
}

impl ResponseBody {
    /// A body of these bytes.
    pub(crate) fn full(bytes: impl Into<Bytes>) -> Self {
        ResponseBody::Full(Some(bytes.into()))
    }
}

impl Body for ResponseBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            ResponseBody::Full(bytes) => {
                Poll::Ready(bytes.take().map(|data| Ok(Frame::data(data))))
            }
            ResponseBody::Pieces(receiver) => receiver
                .poll_recv(context)
                .map(|piece| piece.map(|data| Ok(Frame::data(data)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, ResponseBody::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            ResponseBody::Full(bytes) => {
                SizeHint::with_exact(bytes.as_ref().map_or(0, |data| data.len() as u64))
            }
            ResponseBody::Pieces(_) => SizeHint::default(),
        }
    }
}

/// A plain-text response.
pub(crate) fn text_response(status: u16, text: &str) -> http::Response<ResponseBody> {
    let mut response = http::Response::new(ResponseBody::full(text.to_owned()));
    *response.status_mut() =
        http::StatusCode::from_u16(status).unwrap_or(http::StatusCode::INTERNAL_SERVER_ERROR);
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// The whole body of a request, or `None` when it is longer than `limit` bytes or the client
/// broke off.
pub(crate) async fn read_body(mut body: Incoming, limit: usize) -> Option<Vec<u8>> {
    let mut bytes = Vec::new();
    while let Some(frame) =
        std::future::poll_fn(|context| Pin::new(&mut body).poll_frame(context)).await
    {
        if let Ok(data) = frame.ok()?.into_data() {
            if bytes.len() + data.len() > limit {
                return None;
            }
            bytes.extend_from_slice(&data);
        }
    }
    Some(bytes)
}

/// What answers the requests of a [`LocalHttpServer`].
pub(crate) type Handler = Arc<
    dyn Fn(
            http::Request<Incoming>,
        ) -> Pin<Box<dyn Future<Output = http::Response<ResponseBody>> + Send>>
        + Send
        + Sync,
>;

/// An HTTP/1.1 server on 127.0.0.1 (port 0) answering with a [`Handler`]; it stops accepting,
/// and drops its open connections, when dropped.
#[derive(Debug)]
pub(crate) struct LocalHttpServer {
    /// The port it listens on.
    pub(crate) port: u16,
    requests: Arc<Mutex<Vec<ReceivedRequest>>>,
    accept_loop: tokio::task::AbortHandle,
}

impl LocalHttpServer {
    /// Listen on 127.0.0.1 with port 0 and answer with `handler` on the testkit's runtime.
    pub(crate) fn start(handler: Handler) -> Self {
        let (listener, port) = bind_loopback();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let recorded = Arc::clone(&requests);
        let accept_loop = spawn_accept_loop(listener, move |stream| {
            serve_connection(stream, Arc::clone(&handler), Arc::clone(&recorded))
        });
        LocalHttpServer {
            port,
            requests,
            accept_loop,
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub(crate) fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The requests answered so far, in the order they were answered.
    pub(crate) fn requests(&self) -> Vec<ReceivedRequest> {
        self.requests.lock().expect("the request log").clone()
    }

    /// Stop accepting and drop the open connections (as dropping the server does).
    pub(crate) fn stop(&self) {
        self.accept_loop.abort();
    }
}

impl Drop for LocalHttpServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A non-blocking std listener on 127.0.0.1 with port 0, and its port.
pub(crate) fn bind_loopback() -> (std::net::TcpListener, u16) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap_or_else(|error| panic!("cannot listen on 127.0.0.1: {error}"));
    listener
        .set_nonblocking(true)
        .expect("a non-blocking listener");
    let port = listener.local_addr().expect("a bound address").port();
    (listener, port)
}

/// Accept connections on `listener` on the testkit's runtime, serving each with `serve`, until
/// the returned handle aborts the loop (which aborts the open connections too).
pub(crate) fn spawn_accept_loop<Serve, Served>(
    listener: std::net::TcpListener,
    serve: Serve,
) -> tokio::task::AbortHandle
where
    Serve: Fn(tokio::net::TcpStream) -> Served + Send + 'static,
    Served: std::future::Future<Output = ()> + Send + 'static,
{
    crate::runtime()
        .spawn(async move {
            let listener =
                tokio::net::TcpListener::from_std(listener).expect("a tokio listener from std");
            // Dropping the set (when the loop is aborted) aborts the open connections.
            let mut connections = tokio::task::JoinSet::new();
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    tokio::time::sleep(ACCEPT_RETRY_DELAY).await;
                    continue;
                };
                while connections.try_join_next().is_some() {}
                connections.spawn(serve(stream));
            }
        })
        .abort_handle()
}

async fn serve_connection(
    stream: tokio::net::TcpStream,
    handler: Handler,
    recorded: Arc<Mutex<Vec<ReceivedRequest>>>,
) {
    let service = hyper::service::service_fn(move |request: http::Request<Incoming>| {
        let handler = Arc::clone(&handler);
        let recorded = Arc::clone(&recorded);
        async move {
            let method = request.method().to_string();
            let path = request.uri().path().to_owned();
            let query = request.uri().query().map(str::to_owned);
            let headers = request
                .headers()
                .iter()
                .map(|(name, value)| {
                    (
                        name.as_str().to_owned(),
                        String::from_utf8_lossy(value.as_bytes()).into_owned(),
                    )
                })
                .collect();
            let response = handler(request).await;
            recorded
                .lock()
                .expect("the request log")
                .push(ReceivedRequest {
                    method,
                    path,
                    query,
                    headers,
                    status: response.status().as_u16(),
                });
            Ok::<_, Infallible>(response)
        }
    });
    // A client that breaks off is none of the server's business.
    let _ = hyper::server::conn::http1::Builder::new()
        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
        .await;
}
