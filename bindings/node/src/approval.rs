//! `onApproval`: a JavaScript function asked before each call that runs code. The package's
//! wrapper (`index.js`) awaits the user's callback and answers JSON text, `{"allow": true}` or
//! `{"allow": false, "reason": "..."}`, so this side sees one shape; a callback that throws
//! refuses the call.

use napi::Status;
use napi::bindgen_prelude::Promise;
use napi::threadsafe_function::ThreadsafeFunction;
use skillbox::{Approval, ApprovalDecision, ApprovalRequest};

/// The wrapper: request as JSON text in, a promise of the decision as JSON text out. Weak, so
/// a provider kept alive does not keep Node's event loop alive.
pub type ApprovalCallback =
    ThreadsafeFunction<String, Promise<String>, String, Status, false, true>;

/// The JavaScript callback behind [`Approval`].
pub struct NodeApproval {
    callback: ApprovalCallback,
}

impl NodeApproval {
    pub fn new(callback: ApprovalCallback) -> Self {
        NodeApproval { callback }
    }
}

#[async_trait::async_trait]
impl Approval for NodeApproval {
    async fn decide(&self, request: &ApprovalRequest) -> ApprovalDecision {
        let request = match serde_json::to_string(request) {
            Ok(request) => request,
            Err(error) => return refuse(format!("the request could not be written: {error}")),
        };
        let answer = match self.callback.call_async_catch(request).await {
            Ok(promise) => promise.await,
            Err(error) => Err(error),
        };
        match answer {
            Ok(text) => decision_of(&text),
            Err(error) => refuse(format!("onApproval threw {}", error.reason)),
        }
    }
}

/// `{"allow": true}` runs the call; anything else refuses, with its `reason` when given.
fn decision_of(text: &str) -> ApprovalDecision {
    let answer: serde_json::Value = serde_json::from_str(text).unwrap_or_default();
    if answer["allow"] == serde_json::Value::Bool(true) {
        return ApprovalDecision::Approve;
    }
    refuse(
        answer["reason"]
            .as_str()
            .filter(|reason| !reason.is_empty())
            .unwrap_or("onApproval refused it")
            .to_owned(),
    )
}

fn refuse(reason: String) -> ApprovalDecision {
    ApprovalDecision::Deny { reason }
}
