//! Resource subscriptions: `resources/subscribe` and `unsubscribe` per session, and the
//! 2026-07-28 `subscriptions/listen` streams, each bounded in count and bytes.

use super::*;

impl SkillsMcpServer {
    pub(super) async fn subscribe_to_resource(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        // Only files this server serves, and a bounded number per session: subscriptions are
        // kept in memory for the session's life.
        let uri = request.uri;
        if uri.len() > MAX_SUBSCRIBED_URI_BYTES {
            return Err(ErrorData::invalid_params(
                format!(
                    "the URI is {} bytes; a subscription may name at most {MAX_SUBSCRIBED_URI_BYTES} bytes (spell it as resources/list does)",
                    uri.len()
                ),
                None,
            ));
        }
        let provider = self.provider();
        let served = self
            .blocking({
                let uri = uri.clone();
                move || Ok(catalog_view::read_target(&provider, &uri).is_ok())
            })
            .await?;
        if !served {
            return Err(ErrorData::invalid_params(
                format!("`{uri}` is not a file this server serves; resources/list lists them"),
                None,
            ));
        }
        self.remember_peer(&context.peer);
        let mut subscribed = self
            .session
            .subscribed
            .lock()
            .map_err(|_| ErrorData::internal_error("subscriptions are unavailable", None))?;
        if subscribed.len() >= MAX_SUBSCRIPTIONS && !subscribed.contains(&uri) {
            return Err(ErrorData::invalid_params(
                format!(
                    "a session may subscribe to at most {MAX_SUBSCRIPTIONS} resources; unsubscribe from some first"
                ),
                None,
            ));
        }
        subscribed.insert(uri);
        Ok(())
    }

    pub(super) fn unsubscribe_from_resource(&self, request: UnsubscribeRequestParams) {
        if let Ok(mut subscribed) = self.session.subscribed.lock() {
            subscribed.remove(&request.uri);
        }
    }

    pub(super) fn served_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        // Only files of skills served here, within a total size: a listen stream keeps its
        // filter for as long as it stays open.
        let mut accepted = requested.clone();
        if let Some(uris) = accepted.resource_subscriptions.as_mut() {
            let provider = self.provider();
            let mut total_bytes = 0;
            uris.retain(|uri| {
                let served = uri::locate(&provider, uri).is_ok();
                let fits = total_bytes + uri.len() <= MAX_LISTEN_URI_BYTES;
                if served && fits {
                    total_bytes += uri.len();
                }
                served && fits
            });
            uris.truncate(MAX_SUBSCRIPTIONS);
        }
        Some(accepted)
    }

    pub(super) async fn listen_for_changes(
        &self,
        context: SubscriptionContext,
    ) -> Result<(), ErrorData> {
        // rmcp keeps the filter as requested for the stream's life: a large one ends it at once.
        let requested = context
            .requested()
            .resource_subscriptions
            .as_deref()
            .unwrap_or_default();
        let requested_bytes: usize = requested.iter().map(String::len).sum();
        if requested_bytes > MAX_LISTEN_URI_BYTES || requested.len() > MAX_SUBSCRIPTIONS {
            return Err(ErrorData::invalid_params(
                format!(
                    "the subscription names {} resources in {requested_bytes} bytes; a stream may name at most {MAX_SUBSCRIPTIONS} in {MAX_LISTEN_URI_BYTES} bytes",
                    requested.len()
                ),
                None,
            ));
        }
        let open = &self.shared.open_listens;
        take_place(open, self.shared.options.max_sessions).map_err(|count| {
            ErrorData::internal_error(
                format!("{count} subscription streams are open, the most this server keeps; close one or retry later"),
                None,
            )
        })?;
        let _place = ListenPlace(open);
        let mut changes = self.shared.live.subscribe();
        loop {
            let change = tokio::select! {
                () = context.cancelled() => return Ok(()),
                change = changes.recv() => change,
            };
            let change = match change {
                Ok(change) => Some(change),
                Err(broadcast::error::RecvError::Lagged(_)) => None,
                Err(broadcast::error::RecvError::Closed) => return Ok(()),
            };
            let sink = context.sink();
            let accepted = context.accepted();
            if accepted.tools_list_changed == Some(true) {
                let _ = sink.notify_tool_list_changed().await;
            }
            if accepted.prompts_list_changed == Some(true) {
                let _ = sink.notify_prompt_list_changed().await;
            }
            if accepted.resources_list_changed == Some(true) {
                let _ = sink.notify_resource_list_changed().await;
            }
            let subscribed = accepted
                .resource_subscriptions
                .as_deref()
                .unwrap_or_default();
            if subscribed.is_empty() {
                continue;
            }
            let changed = changed_uris(&self.provider(), change.as_ref());
            for uri in subscribed {
                if changed.as_ref().is_none_or(|changed| changed.contains(uri)) {
                    let _ = sink.notify_resource_updated(uri.clone()).await;
                }
            }
        }
    }
}
