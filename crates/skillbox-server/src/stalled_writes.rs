//! Connections whose client stops reading are closed.
//!
//! hyper writes an answer as fast as the client takes it and has no timeout of its own for
//! that: a client that sends a request for a large answer (a 16 MiB `read_blob`) and then never
//! reads would hold the connection, and the answer's memory, forever. [`StallTimeout`] wraps a
//! connection's stream so that a write (or flush) that makes no progress for the stall limit
//! fails, which ends the connection and frees what it held. Any progress restarts the clock, so
//! slow clients are served; only clients that stop reading are cut off. Reading is untouched
//! (the header-read timeout and the request timeout bound that side).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

/// A stream whose writes fail once they have been blocked for longer than a limit.
#[derive(Debug)]
pub(crate) struct StallTimeout<S> {
    inner: S,
    limit: Duration,
    /// Armed when a write is first refused for want of room, cleared by any progress.
    stalled: Option<Pin<Box<Sleep>>>,
}

impl<S> StallTimeout<S> {
    /// Wrap `inner`; its writes may be blocked for at most `limit` at a time.
    pub(crate) fn new(inner: S, limit: Duration) -> Self {
        StallTimeout {
            inner,
            limit,
            stalled: None,
        }
    }

    /// Pass on a finished write (and clear the clock), or arm the clock for a blocked one and
    /// fail it once the limit has passed.
    fn watch<T>(
        &mut self,
        polled: Poll<io::Result<T>>,
        context: &mut Context<'_>,
    ) -> Poll<io::Result<T>> {
        if polled.is_ready() {
            self.stalled = None;
            return polled;
        }
        let limit = self.limit;
        let clock = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        match clock.as_mut().poll(context) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(()) => {
                tracing::warn!(
                    stall_ms = limit.as_millis(),
                    "a client stopped reading its answer; closing the connection"
                );
                Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "the client read nothing of its answer for {} ms",
                        limit.as_millis()
                    ),
                )))
            }
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for StallTimeout<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buffer: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(context, buffer)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for StallTimeout<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_write(context, bytes);
        this.watch(polled, context)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buffers: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_write_vectored(context, buffers);
        this.watch(polled, context)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_flush(context);
        this.watch(polled, context)
    }

    fn poll_shutdown(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_shutdown(context);
        this.watch(polled, context)
    }
}
