//! A model API server that answers from a script: each request takes the next scripted reply
//! (a server-sent event stream, a body, a cut stream), and every request is recorded so tests
//! check what the client sent. It stands in for a hosted provider (OpenRouter, OpenAI,
//! Anthropic) with the replies their documentation shows, on 127.0.0.1 with port 0.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// One scripted reply.
#[derive(Debug, Clone)]
pub enum Reply {
    /// `200 text/event-stream` with these events (each a block such as
    /// `event: x\ndata: {...}`), then the connection closes.
    Events(Vec<String>),
    /// A status, extra headers, a content type and a body.
    Body {
        /// HTTP status.
        status: u16,
        /// Extra headers (`Retry-After`).
        headers: Vec<(String, String)>,
        /// `Content-Type`.
        content_type: String,
        /// The body.
        body: String,
    },
    /// An event stream that stops after these events without its end (the connection drops).
    CutEvents(Vec<String>),
    /// Accept the request and never answer (until the client gives up).
    Silent,
    /// [`Reply::Events`], waiting this long before each event (a slow model).
    PacedEvents(Vec<String>, Duration),
}

impl Reply {
    /// Chat Completions-style `data:` events from JSON texts, ended by `data: [DONE]`.
    #[must_use]
    pub fn data_events(chunks: &[&str]) -> Reply {
        let mut events: Vec<String> = chunks
            .iter()
            .map(|chunk| format!("data: {chunk}"))
            .collect();
        events.push("data: [DONE]".to_owned());
        Reply::Events(events)
    }

    /// An error status with a JSON body.
    #[must_use]
    pub fn error(status: u16, body: &str) -> Reply {
        Reply::Body {
            status,
            headers: Vec::new(),
            content_type: "application/json".to_owned(),
            body: body.to_owned(),
        }
    }
}

/// A request the server received.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// The request line's path.
    pub path: String,
    /// Headers, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The body as text.
    pub body: String,
}

impl RecordedRequest {
    /// A header's value.
    #[must_use]
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

/// The server; it stops when dropped.
#[derive(Debug)]
pub struct ScriptedModelServer {
    /// `http://127.0.0.1:PORT/v1`.
    pub base_url: String,
    requests: Arc<Mutex<Vec<RecordedRequest>>>,
    _thread: std::thread::JoinHandle<()>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for ScriptedModelServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

impl ScriptedModelServer {
    /// Serve `replies` in order; past the last, every request gets a 500 saying so.
    #[must_use]
    pub fn start(replies: Vec<Reply>) -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let port = listener.local_addr().expect("address").port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let replies = Arc::new(Mutex::new(VecDeque::from(replies)));
        let recorded = Arc::clone(&requests);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                let serve = async {
                    loop {
                        let Ok((stream, _)) = listener.accept().await else {
                            continue;
                        };
                        let recorded = Arc::clone(&recorded);
                        let replies = Arc::clone(&replies);
                        tokio::spawn(async move {
                            let _ = answer(stream, &recorded, &replies).await;
                        });
                    }
                };
                tokio::select! {
                    () = serve => {}
                    _ = stopped => {}
                }
            });
        });
        ScriptedModelServer {
            base_url: format!("http://127.0.0.1:{port}/v1"),
            requests,
            _thread: thread,
            stop: Some(stop),
        }
    }

    /// The requests received so far.
    #[must_use]
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.requests.lock().expect("lock").clone()
    }
}

async fn answer(
    mut stream: tokio::net::TcpStream,
    recorded: &Mutex<Vec<RecordedRequest>>,
    replies: &Mutex<VecDeque<Reply>>,
) -> std::io::Result<()> {
    let mut buffer = Vec::new();
    let mut chunk = [0_u8; 8192];
    let header_end = loop {
        let read = stream.read(&mut chunk).await?;
        if read == 0 {
            return Ok(());
        }
        buffer.extend_from_slice(&chunk[..read]);
        if let Some(end) = buffer.windows(4).position(|window| window == b"\r\n\r\n") {
            break end + 4;
        }
    };
    let head = String::from_utf8_lossy(&buffer[..header_end]).into_owned();
    let mut lines = head.split("\r\n");
    let path = lines
        .next()
        .and_then(|line| line.split_whitespace().nth(1))
        .unwrap_or_default()
        .to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(name, _)| name == "content-length")
        .and_then(|(_, value)| value.parse().ok())
        .unwrap_or(0);
    while buffer.len() < header_end + length {
        let read = stream.read(&mut chunk).await?;
        if read == 0 {
            break;
        }
        buffer.extend_from_slice(&chunk[..read]);
    }
    let body = String::from_utf8_lossy(&buffer[header_end..]).into_owned();
    recorded.lock().expect("lock").push(RecordedRequest {
        path,
        headers,
        body,
    });
    let reply = replies.lock().expect("lock").pop_front();
    match reply {
        None => {
            write_body(
                &mut stream,
                500,
                &[],
                "application/json",
                r#"{"error":{"message":"the script has no more replies"}}"#,
            )
            .await
        }
        Some(Reply::Body {
            status,
            headers,
            content_type,
            body,
        }) => write_body(&mut stream, status, &headers, &content_type, &body).await,
        Some(Reply::Events(events)) => {
            write_events(&mut stream, &events, Duration::ZERO, true).await
        }
        Some(Reply::CutEvents(events)) => {
            write_events(&mut stream, &events, Duration::ZERO, false).await
        }
        Some(Reply::PacedEvents(events, gap)) => {
            write_events(&mut stream, &events, gap, true).await
        }
        Some(Reply::Silent) => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok(())
        }
    }
}

async fn write_body(
    stream: &mut tokio::net::TcpStream,
    status: u16,
    headers: &[(String, String)],
    content_type: &str,
    body: &str,
) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {status} Scripted\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    stream.shutdown().await
}

async fn write_events(
    stream: &mut tokio::net::TcpStream,
    events: &[String],
    gap: Duration,
    complete: bool,
) -> std::io::Result<()> {
    stream
        .write_all(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n",
        )
        .await?;
    for event in events {
        if !gap.is_zero() {
            tokio::time::sleep(gap).await;
        }
        stream.write_all(format!("{event}\n\n").as_bytes()).await?;
        stream.flush().await?;
    }
    if complete {
        stream.shutdown().await
    } else {
        // Drop the connection mid-stream: the client sees the stream end without its close.
        Ok(())
    }
}
