//! A small closed-loop HTTP/1.1 load generator for `bench/server.sh`.
//!
//! Each of `--connections` keep-alive connections sends one POST at a time, waits for the
//! whole response, checks it, and sends the next. Every loop is bounded by time
//! (`--warmup` + `--duration`, plus one `--timeout` for the request in flight) and optionally
//! by count (`--max-requests`). It only accepts `http://` URLs whose host is a loopback
//! address, since the benchmark must never send traffic anywhere else.
//!
//! It prints one JSON line on stdout:
//! `{"label", "connections", "threads", "duration_s", "requests", "rps", "errors", ...,
//!   "first_errors": {KIND: first message}, "latency_us": {"min", "mean", "p50", "p90", "p99",
//!   "p999", "max"}}`. It exits 0 when at least one request succeeded (the caller judges the
//! error counts), 1 when none did, 2 on a usage error.
//! Latencies are measured from just before the request is handed to the connection to the
//! end of the response body; connection set-up is not included.

// The root clippy.toml asks for fs_err; this standalone crate names the path in its messages.
#![allow(clippy::disallowed_methods)]

use std::net::{IpAddr, SocketAddr};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;

const USAGE: &str = "\
usage: skillbox-loadgen --url http://127.0.0.1:PORT/PATH (--body JSON | --body-file FILE)
         [--connections 64] [--threads 2] [--duration 10] [--warmup 1]
         [--max-requests N] [--warmup-requests N] [--timeout 5]
         [--expect TEXT] [--label NAME] [--samples-out FILE]

  --duration/--warmup/--timeout are seconds (decimals allowed). --max-requests bounds the
  number of requests started (warm-up included). --warmup-requests: the first N requests
  are not recorded. --expect: a response counts as good only if it is HTTP 200 and its body
  contains TEXT (default: \"result\":). --samples-out writes every recorded latency in
  microseconds, one per line, in completion order per connection.";

#[derive(Debug, Clone)]
struct Config {
    address: SocketAddr,
    host_header: String,
    path: String,
    body: Bytes,
    connections: usize,
    threads: usize,
    duration: Duration,
    warmup: Duration,
    max_requests: u64,
    warmup_requests: u64,
    timeout: Duration,
    expect: Vec<u8>,
    label: String,
    samples_out: Option<String>,
}

fn parse_seconds(flag: &str, value: &str) -> Result<Duration, String> {
    let seconds: f64 = value
        .parse()
        .map_err(|_| format!("{flag} needs a number of seconds, not `{value}`"))?;
    if !(0.0..=3600.0).contains(&seconds) {
        return Err(format!("{flag} must be between 0 and 3600 seconds"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

fn parse_count(flag: &str, value: &str) -> Result<u64, String> {
    value
        .parse()
        .map_err(|_| format!("{flag} needs a whole number, not `{value}`"))
}

/// Split `http://HOST:PORT/PATH` into a loopback socket address and a path.
fn parse_url(url: &str) -> Result<(SocketAddr, String, String), String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| format!("only http:// URLs are supported, not `{url}`"))?;
    let (authority, path) = match rest.find('/') {
        Some(slash) => (&rest[..slash], rest[slash..].to_owned()),
        None => (rest, "/".to_owned()),
    };
    let address: SocketAddr = authority
        .replace("localhost", "127.0.0.1")
        .parse()
        .map_err(|_| format!("the URL needs a numeric HOST:PORT, not `{authority}`"))?;
    let loopback = match address.ip() {
        IpAddr::V4(ip) => ip.is_loopback(),
        IpAddr::V6(ip) => ip.is_loopback(),
    };
    if !loopback {
        return Err(format!(
            "refusing to send load to {address}: only loopback addresses are allowed"
        ));
    }
    Ok((address, authority.to_owned(), path))
}

fn parse_arguments(arguments: &[String]) -> Result<Config, String> {
    let mut url = None;
    let mut body = None;
    let mut config = Config {
        address: SocketAddr::from(([127, 0, 0, 1], 0)),
        host_header: String::new(),
        path: String::new(),
        body: Bytes::new(),
        connections: 64,
        threads: 2,
        duration: Duration::from_secs(10),
        warmup: Duration::from_secs(1),
        max_requests: u64::MAX,
        warmup_requests: 0,
        timeout: Duration::from_secs(5),
        expect: b"\"result\":".to_vec(),
        label: String::from("load"),
        samples_out: None,
    };
    let mut index = 0;
    while index < arguments.len() {
        let flag = arguments[index].as_str();
        if flag == "-h" || flag == "--help" {
            return Err(String::new());
        }
        let value = arguments
            .get(index + 1)
            .ok_or_else(|| format!("{flag} needs a value"))?;
        match flag {
            "--url" => url = Some(value.clone()),
            "--body" => body = Some(Bytes::from(value.clone().into_bytes())),
            "--body-file" => {
                body = Some(Bytes::from(std::fs::read(value).map_err(|error| {
                    format!("cannot read --body-file `{value}`: {error}")
                })?));
            }
            "--connections" => {
                config.connections = usize::try_from(parse_count(flag, value)?)
                    .map_err(|_| "--connections is too large".to_owned())?;
            }
            "--threads" => {
                config.threads = usize::try_from(parse_count(flag, value)?)
                    .map_err(|_| "--threads is too large".to_owned())?;
            }
            "--duration" => config.duration = parse_seconds(flag, value)?,
            "--warmup" => config.warmup = parse_seconds(flag, value)?,
            "--timeout" => config.timeout = parse_seconds(flag, value)?,
            "--max-requests" => config.max_requests = parse_count(flag, value)?,
            "--warmup-requests" => config.warmup_requests = parse_count(flag, value)?,
            "--expect" => config.expect = value.clone().into_bytes(),
            "--label" => config.label = value.clone(),
            "--samples-out" => config.samples_out = Some(value.clone()),
            other => return Err(format!("unknown option `{other}`")),
        }
        index += 2;
    }
    let url = url.ok_or_else(|| "--url is required".to_owned())?;
    (config.address, config.host_header, config.path) = parse_url(&url)?;
    config.body = body.ok_or_else(|| "--body or --body-file is required".to_owned())?;
    if !(1..=1024).contains(&config.connections) {
        return Err("--connections must be between 1 and 1024".to_owned());
    }
    if !(1..=64).contains(&config.threads) {
        return Err("--threads must be between 1 and 64".to_owned());
    }
    if config.timeout.is_zero() {
        return Err("--timeout must be above 0".to_owned());
    }
    Ok(config)
}

/// What one connection saw.
#[derive(Debug, Default)]
struct Tally {
    /// Latencies in microseconds of recorded good requests.
    latencies: Vec<u32>,
    /// Good responses that completed inside the measured window.
    completed_in_window: u64,
    /// Response body bytes of recorded good requests.
    body_bytes: u64,
    status_errors: u64,
    body_errors: u64,
    io_errors: u64,
    timeouts: u64,
    connect_errors: u64,
    /// New connections after the first (server closed it, or after an error).
    reconnects: u64,
    /// The first message of each kind, in the order of [`ERROR_KINDS`].
    first_errors: [Option<String>; 5],
}

/// Names of the error kinds, as printed in `first_errors`.
const ERROR_KINDS: [&str; 5] = ["status", "body", "io", "timeout", "connect"];

impl Tally {
    fn error(&mut self, kind: usize, message: String) {
        let slot = &mut self.first_errors[kind];
        if slot.is_none() {
            *slot = Some(message);
        }
    }

    fn errors(&self) -> u64 {
        self.status_errors + self.body_errors + self.io_errors + self.timeouts + self.connect_errors
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    needle.is_empty()
        || haystack
            .windows(needle.len())
            .any(|window| window == needle)
}

async fn connect(config: &Config) -> Result<http1::SendRequest<Full<Bytes>>, String> {
    let stream = tokio::time::timeout(
        config.timeout,
        tokio::net::TcpStream::connect(config.address),
    )
    .await
    .map_err(|_| "connect timed out".to_owned())?
    .map_err(|error| format!("connect: {error}"))?;
    stream
        .set_nodelay(true)
        .map_err(|error| format!("set_nodelay: {error}"))?;
    let (sender, connection) = http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|error| format!("handshake: {error}"))?;
    tokio::spawn(async move {
        // Ends when the sender is dropped or the server closes the connection.
        let _ = connection.await;
    });
    Ok(sender)
}

/// One connection's closed loop, until the deadline or the request budget runs out.
async fn run_connection(
    config: Arc<Config>,
    issued: Arc<AtomicU64>,
    measure_from: Instant,
    deadline: Instant,
) -> Tally {
    let mut tally = Tally::default();
    let mut sender: Option<http1::SendRequest<Full<Bytes>>> = None;
    let mut connected_once = false;
    while Instant::now() < deadline {
        let mut current = match sender.take() {
            Some(current) if !current.is_closed() => current,
            _ => match connect(&config).await {
                Ok(fresh) => {
                    if connected_once {
                        tally.reconnects += 1;
                    }
                    connected_once = true;
                    fresh
                }
                Err(message) => {
                    tally.connect_errors += 1;
                    tally.error(4, message);
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        if current.ready().await.is_err() {
            // The server closed an idle keep-alive connection; open a new one.
            continue;
        }
        let number = issued.fetch_add(1, Ordering::Relaxed);
        if number >= config.max_requests {
            break;
        }
        let request = match Request::post(config.path.as_str())
            .header(hyper::header::HOST, config.host_header.as_str())
            .header(hyper::header::CONTENT_TYPE, "application/json")
            .body(Full::new(config.body.clone()))
        {
            Ok(request) => request,
            Err(error) => {
                tally.io_errors += 1;
                tally.error(2, format!("building the request: {error}"));
                break;
            }
        };
        let started = Instant::now();
        let exchange = async {
            let response = current.send_request(request).await?;
            let status = response.status();
            let body = response.into_body().collect().await?.to_bytes();
            Ok::<_, hyper::Error>((status, body))
        };
        let outcome = tokio::time::timeout(config.timeout, exchange).await;
        let finished = Instant::now();
        let recorded = started >= measure_from && number >= config.warmup_requests;
        match outcome {
            Err(_) => {
                tally.timeouts += 1;
                tally.error(3, format!("no response within {:?}", config.timeout));
                continue; // drop the connection: its state is unknown
            }
            Ok(Err(error)) => {
                tally.io_errors += 1;
                tally.error(2, format!("request: {error}"));
                continue;
            }
            Ok(Ok((status, body))) => {
                if status != hyper::StatusCode::OK {
                    tally.status_errors += 1;
                    tally.error(
                        0,
                        format!(
                            "HTTP {status}: {}",
                            String::from_utf8_lossy(&body[..body.len().min(300)])
                        ),
                    );
                } else if !contains(&body, &config.expect) {
                    tally.body_errors += 1;
                    tally.error(
                        1,
                        format!(
                            "body lacks the expected text: {}",
                            String::from_utf8_lossy(&body[..body.len().min(300)])
                        ),
                    );
                } else if recorded {
                    let micros = u32::try_from(finished.duration_since(started).as_micros())
                        .unwrap_or(u32::MAX);
                    tally.latencies.push(micros);
                    tally.body_bytes += body.len() as u64;
                    if finished <= deadline {
                        tally.completed_in_window += 1;
                    }
                }
            }
        }
        sender = Some(current);
    }
    tally
}

fn percentile(sorted: &[u32], fraction: f64) -> u32 {
    if sorted.is_empty() {
        return 0;
    }
    // Nearest rank.
    let rank = (fraction * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn json_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for character in text.chars() {
        match character {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn main() -> ExitCode {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let config = match parse_arguments(&arguments) {
        Ok(config) => Arc::new(config),
        Err(message) => {
            if !message.is_empty() {
                eprintln!("skillbox-loadgen: {message}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(config.threads)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("skillbox-loadgen: cannot start the runtime: {error}");
            return ExitCode::from(1);
        }
    };
    let tallies = runtime.block_on(async {
        let start = Instant::now();
        let measure_from = start + config.warmup;
        let deadline = measure_from + config.duration;
        let issued = Arc::new(AtomicU64::new(0));
        let tasks: Vec<_> = (0..config.connections)
            .map(|_| {
                tokio::spawn(run_connection(
                    Arc::clone(&config),
                    Arc::clone(&issued),
                    measure_from,
                    deadline,
                ))
            })
            .collect();
        let mut tallies = Vec::with_capacity(tasks.len());
        for task in tasks {
            match task.await {
                Ok(tally) => tallies.push(tally),
                Err(error) => {
                    let mut failed = Tally::default();
                    failed.io_errors += 1;
                    failed.error(2, format!("a connection task failed: {error}"));
                    tallies.push(failed);
                }
            }
        }
        // The measured window: from the end of warm-up to the deadline, or to when the last
        // connection stopped if the request budget ran out first.
        let window = Instant::now()
            .min(deadline)
            .saturating_duration_since(measure_from);
        (tallies, window)
    });
    let (tallies, window) = tallies;
    // Don't wait for connection tasks that are still closing.
    runtime.shutdown_timeout(Duration::from_millis(200));

    let mut latencies: Vec<u32> = Vec::new();
    let mut total = Tally::default();
    for tally in tallies {
        latencies.extend_from_slice(&tally.latencies);
        total.completed_in_window += tally.completed_in_window;
        total.body_bytes += tally.body_bytes;
        total.status_errors += tally.status_errors;
        total.body_errors += tally.body_errors;
        total.io_errors += tally.io_errors;
        total.timeouts += tally.timeouts;
        total.connect_errors += tally.connect_errors;
        total.reconnects += tally.reconnects;
        for (slot, message) in total.first_errors.iter_mut().zip(tally.first_errors) {
            if slot.is_none() {
                *slot = message;
            }
        }
    }
    if let Some(path) = &config.samples_out {
        let text: String = latencies
            .iter()
            .map(|micros| format!("{micros}\n"))
            .collect();
        if let Err(error) = std::fs::write(path, text) {
            eprintln!("skillbox-loadgen: cannot write --samples-out `{path}`: {error}");
            return ExitCode::from(1);
        }
    }
    let recorded = latencies.len() as u64;
    let mut sorted = latencies;
    sorted.sort_unstable();
    let mean = if sorted.is_empty() {
        0.0
    } else {
        sorted.iter().map(|&micros| f64::from(micros)).sum::<f64>() / sorted.len() as f64
    };
    let seconds = window.as_secs_f64();
    // With a request budget the window ends early; count every recorded request then.
    let counted = if config.max_requests == u64::MAX {
        total.completed_in_window
    } else {
        recorded
    };
    let rps = if seconds > 0.0 {
        counted as f64 / seconds
    } else {
        0.0
    };
    println!(
        "{{\"label\":{},\"connections\":{},\"threads\":{},\"duration_s\":{:.3},\
         \"requests\":{},\"recorded\":{},\"rps\":{:.1},\"errors\":{},\"status_errors\":{},\
         \"body_errors\":{},\"io_errors\":{},\"timeouts\":{},\"connect_errors\":{},\
         \"reconnects\":{},\"mean_body_bytes\":{:.0},\"first_errors\":{{{}}},\
         \"latency_us\":{{\"min\":{},\"mean\":{:.1},\"p50\":{},\"p90\":{},\"p99\":{},\
         \"p999\":{},\"max\":{}}}}}",
        json_string(&config.label),
        config.connections,
        config.threads,
        seconds,
        counted,
        recorded,
        rps,
        total.errors(),
        total.status_errors,
        total.body_errors,
        total.io_errors,
        total.timeouts,
        total.connect_errors,
        total.reconnects,
        if recorded == 0 {
            0.0
        } else {
            total.body_bytes as f64 / recorded as f64
        },
        ERROR_KINDS
            .iter()
            .zip(&total.first_errors)
            .filter_map(|(kind, message)| {
                message
                    .as_deref()
                    .map(|message| format!("\"{kind}\":{}", json_string(message)))
            })
            .collect::<Vec<_>>()
            .join(","),
        sorted.first().copied().unwrap_or(0),
        mean,
        percentile(&sorted, 0.50),
        percentile(&sorted, 0.90),
        percentile(&sorted, 0.99),
        percentile(&sorted, 0.999),
        sorted.last().copied().unwrap_or(0),
    );
    if recorded == 0 {
        eprintln!("skillbox-loadgen: no request succeeded");
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
