//! A stream of server-sent events fed by a task, which ends as soon as the page reading it is
//! gone: the catalog's change events and the chat's event log use it.

use futures_util::Stream;

/// A stream fed by a task: `produce` sends into a small channel until the receiver is gone.
/// The task is dropped as soon as the receiver is (the page closed), not at its next send:
/// a producer waiting for a change that never comes would otherwise hold what it holds (its
/// place among the open streams) for good.
pub(crate) fn async_stream_of<T, F, Fut>(produce: F) -> impl Stream<Item = T>
where
    T: Send + 'static,
    F: FnOnce(tokio::sync::mpsc::Sender<T>) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let (sender, receiver) = tokio::sync::mpsc::channel(16);
    let watcher = sender.clone();
    let producer = produce(sender);
    tokio::spawn(async move {
        tokio::select! {
            () = producer => {}
            () = watcher.closed() => {}
        }
    });
    futures_util::stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|item| (item, receiver))
    })
}
