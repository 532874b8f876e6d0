//! Reloads announced to every connected session: `list_changed` for tools, prompts,
//! resources and skills, `resources/updated` for subscribed files, and the listen streams.

use super::*;

/// Send what each reload changed to every session still connected.
pub(super) async fn announce_reloads(
    shared: Weak<Shared>,
    mut changes: broadcast::Receiver<CatalogChange>,
) {
    loop {
        let change = match changes.recv().await {
            Ok(change) => Some(change),
            Err(broadcast::error::RecvError::Lagged(_)) => None,
            Err(broadcast::error::RecvError::Closed) => return,
        };
        let Some(shared) = shared.upgrade() else {
            return;
        };
        let sessions: Vec<Arc<ClientSession>> = match shared.sessions.lock() {
            Ok(mut sessions) => {
                sessions.retain(|session| session.strong_count() > 0);
                sessions.iter().filter_map(Weak::upgrade).collect()
            }
            Err(_) => return,
        };
        // Which files changed matters only to sessions with subscriptions.
        let any_subscribed = sessions.iter().any(|session| {
            session
                .subscribed
                .lock()
                .is_ok_and(|subscribed| !subscribed.is_empty())
        });
        let changed = if any_subscribed {
            changed_uris(&shared.live.current(), change.as_ref())
        } else {
            None
        };
        let skills = shared.live.current().model_skills().len();
        for session in sessions {
            let Some(peer) = session.peer.get() else {
                continue;
            };
            if let Some(change) = change.as_ref() {
                session.log_reload(change, skills);
            }
            if peer.is_transport_closed() {
                continue;
            }
            // Each send may wait for a full queue; a session that reads nothing is skipped
            // after NOTIFY_TIMEOUT rather than holding up every other session.
            let stalled = tokio::time::timeout(NOTIFY_TIMEOUT, async {
                let _ = peer.notify_tool_list_changed().await;
                let _ = peer.notify_prompt_list_changed().await;
                let _ = peer.notify_resource_list_changed().await;
            })
            .await
            .is_err();
            if stalled {
                tracing::debug!("a session reads no notifications; skipped");
                continue;
            }
            let subscribed: Vec<String> = session
                .subscribed
                .lock()
                .map(|subscribed| {
                    subscribed
                        .iter()
                        .filter(|uri| {
                            changed
                                .as_ref()
                                .is_none_or(|changed| changed.contains(*uri))
                        })
                        .cloned()
                        .collect()
                })
                .unwrap_or_default();
            for uri in subscribed {
                let sent = tokio::time::timeout(
                    NOTIFY_TIMEOUT,
                    peer.notify_resource_updated(
                        rmcp::model::ResourceUpdatedNotificationParam::new(uri),
                    ),
                )
                .await;
                if sent.is_err() {
                    break;
                }
            }
        }
    }
}

/// The URIs of the files a reload's change touched, among the skills now served; `None` when
/// unknown (a lagging receiver), meaning anything may have changed.
pub(super) fn changed_uris(
    provider: &SkillsProvider,
    change: Option<&CatalogChange>,
) -> Option<BTreeSet<String>> {
    let change = change?;
    let mut uris = BTreeSet::new();
    for skill in provider.model_skills() {
        for path in &change.changed_paths {
            if let Ok(relative) = path.strip_prefix(&skill.directory) {
                let relative = relative.to_string_lossy();
                let relative = if relative == skill.skill_md_name {
                    catalog_view::SKILL_MD.to_owned()
                } else {
                    relative.into_owned()
                };
                if !relative.is_empty() {
                    uris.insert(uri::file_uri(skill.name(), &relative));
                }
            }
        }
    }
    Some(uris)
}
