//! The blob store on a real S3-compatible server (moto on 127.0.0.1, see
//! `skillbox_testkit::s3_server`): the same guarantees as the local store, with two stores over
//! one bucket standing for two replicas.

use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;
use std::time::Duration;

use object_store::ObjectStoreExt;
use skillbox_services::blobs::DEFAULT_BLOB_TTL;
use skillbox_services::{BlobError, BlobLocation, BlobSample, BlobStore, ReadMode};
use skillbox_testkit::s3_server::S3Server;

/// The prefix the tests keep their blobs under, as `--blob-store s3://bucket/PREFIX` does.
const PREFIX: &str = "team/skillbox";

fn location(bucket: &str) -> skillbox_services::blob_location::RemoteLocation {
    match BlobLocation::parse(&format!("s3://{bucket}/{PREFIX}")).unwrap() {
        BlobLocation::Remote(remote) => remote,
        BlobLocation::Local(folder) => panic!("a bucket was read as {}", folder.display()),
    }
}

/// A store over `bucket` on the shared server (one per replica).
fn replica(bucket: &str, ttl: Duration) -> BlobStore {
    BlobStore::remote_in(&location(bucket), ttl, &S3Server::shared().environment()).unwrap()
}

/// The bucket itself, without the blob store in between, for planting objects.
fn raw_bucket(bucket: &str) -> object_store::aws::AmazonS3 {
    let server = S3Server::shared();
    object_store::aws::AmazonS3Builder::new()
        .with_endpoint(&server.endpoint)
        .with_allow_http(true)
        .with_region(skillbox_testkit::s3_server::REGION)
        .with_access_key_id("any")
        .with_secret_access_key("any")
        .with_bucket_name(bucket)
        .build()
        .unwrap()
}

async fn read(store: &BlobStore, blob_id: &str, mode: ReadMode, max: Option<u64>) -> BlobSample {
    let meta = store.meta(blob_id).await.unwrap();
    store
        .read_range(&meta, mode.range(meta.size_bytes, max))
        .await
        .unwrap()
}

#[test]
fn a_blob_written_through_one_replica_is_read_whole_through_the_other() {
    skillbox_testkit::runtime().block_on(async {
        let server = S3Server::shared();
        let bucket = server.create_bucket();
        let (a, b) = (
            replica(&bucket, DEFAULT_BLOB_TTL),
            replica(&bucket, DEFAULT_BLOB_TTL),
        );
        a.check_access().await.unwrap();
        let text = a.create("hello world", "text/plain", None).await.unwrap();
        let head = read(&b, &text.blob_id, ReadMode::Head, Some(5)).await;
        assert_eq!(head.text().as_deref(), Some("hello"));
        let tail = read(&b, &text.blob_id, ReadMode::Tail, Some(5)).await;
        assert_eq!((tail.text().as_deref(), tail.offset), (Some("world"), 6));
        let full = read(&b, &text.blob_id, ReadMode::Full, None).await;
        assert_eq!(full.text().as_deref(), Some("hello world"));
        let binary = a
            .create("AAEC/w==", "application/octet-stream", Some("base64"))
            .await
            .unwrap();
        let binary = read(&b, &binary.blob_id, ReadMode::Full, None).await;
        assert_eq!(
            (binary.text(), &binary.bytes[..]),
            (None, &[0, 1, 2, 0xff][..])
        );

        // A stream larger than one part goes up as a multipart upload.
        let size = 20 * 1024 * 1024 + 7;
        let content: Vec<u8> = (0..size).map(|index| (index % 251) as u8).collect();
        let large = a
            .create_from_reader(content.as_slice(), "application/octet-stream", u64::MAX)
            .await
            .unwrap();
        assert_eq!(large.size_bytes, size as u64);
        assert_eq!(b.meta(&large.blob_id).await.unwrap(), large);
        // The last bytes alone are fetched: a ranged read.
        let last = b
            .read_range(&large, size as u64 - 3..size as u64)
            .await
            .unwrap();
        assert_eq!(last.offset, size as u64 - 3);
        // A run on the other replica gets a readable copy of the whole blob.
        let folder = tempfile::tempdir().unwrap();
        let copy = b.copy_for_run(&large, folder.path()).await.unwrap();
        assert_eq!(fs_err::read(&copy).unwrap(), content);
        assert_eq!(
            std::fs::metadata(&copy).unwrap().permissions().mode() & 0o777,
            0o644
        );

        // Every object is under the prefix, bytes and record side by side.
        let id = large.blob_id.strip_prefix("blob:").unwrap();
        let keys = server.keys(&bucket, "");
        assert!(
            keys.iter()
                .all(|object| object.key.starts_with("team/skillbox/")),
            "{keys:?}"
        );
        assert!(
            keys.iter()
                .any(|object| object.key == format!("{PREFIX}/data/{id}")
                    && object.size == size as u64),
            "{keys:?}"
        );
        assert_eq!(server.uploads_in_progress(&bucket), 0);
        assert!(matches!(
            b.meta("blob:00000000000000000000000000000000").await,
            Err(BlobError::NotFound(_))
        ));
    });
}

#[test]
fn replicas_may_expire_blobs_at_the_same_time() {
    skillbox_testkit::runtime().block_on(async {
        let server = S3Server::shared();
        let bucket = server.create_bucket();
        let writer = replica(&bucket, DEFAULT_BLOB_TTL);
        let mut ids = Vec::new();
        for index in 0..20 {
            let meta = writer
                .create(format!("blob {index}"), "text/plain", None)
                .await
                .unwrap();
            ids.push(meta.blob_id);
        }
        // Two replicas keeping blobs no time at all sweep together.
        let (a, b) = (
            replica(&bucket, Duration::ZERO),
            replica(&bucket, Duration::ZERO),
        );
        // The server keeps modification times to the second.
        tokio::time::sleep(Duration::from_millis(1100)).await;
        let (swept_a, swept_b) = tokio::join!(a.sweep(), b.sweep());
        let (swept_a, swept_b) = (swept_a.unwrap(), swept_b.unwrap());
        assert!(swept_a + swept_b >= ids.len(), "{swept_a} + {swept_b}");
        for blob_id in &ids {
            assert!(matches!(
                writer.meta(blob_id).await,
                Err(BlobError::NotFound(_))
            ));
        }
        assert_eq!(server.keys(&bucket, ""), []);
        // Sweeping what is already gone is fine.
        assert_eq!(a.sweep().await.unwrap(), 0);
    });
}

#[test]
fn bytes_without_a_record_are_removed_only_after_the_grace_period() {
    skillbox_testkit::runtime().block_on(async {
        let server = S3Server::shared();
        let bucket = server.create_bucket();
        let raw = raw_bucket(&bucket);
        // Bytes an upload left without its record (a replica killed before committing).
        let orphan = format!("{PREFIX}/data/{}", "ab".repeat(16));
        raw.put(&orphan.as_str().into(), "half a blob".into())
            .await
            .unwrap();
        let patient = replica(&bucket, DEFAULT_BLOB_TTL);
        let kept = patient.create("kept", "text/plain", None).await.unwrap();
        assert_eq!(patient.sweep().await.unwrap(), 0);
        assert_eq!(server.keys(&bucket, &orphan).len(), 1, "removed too early");
        tokio::time::sleep(Duration::from_millis(1100)).await;
        let hasty = replica(&bucket, DEFAULT_BLOB_TTL).with_orphan_grace(Duration::from_millis(1));
        assert_eq!(hasty.sweep().await.unwrap(), 1);
        assert_eq!(server.keys(&bucket, &orphan), []);
        // A committed blob is never taken for an orphan.
        assert_eq!(
            read(&hasty, &kept.blob_id, ReadMode::Full, None)
                .await
                .text()
                .as_deref(),
            Some("kept")
        );
    });
}

#[test]
fn an_upload_slower_than_the_commit_deadline_is_never_committed() {
    skillbox_testkit::runtime().block_on(async {
        let server = S3Server::shared();
        let bucket = server.create_bucket();
        // A grace period of zero leaves no time to commit anything.
        let store = replica(&bucket, DEFAULT_BLOB_TTL).with_orphan_grace(Duration::ZERO);
        let error = store
            .create("late", "text/plain", None)
            .await
            .unwrap_err()
            .to_string();
        assert!(error.contains("took longer than"), "{error}");
        assert_eq!(server.keys(&bucket, &format!("{PREFIX}/meta")), []);
    });
}

#[test]
fn an_unreachable_or_misconfigured_store_is_named_with_what_to_set() {
    skillbox_testkit::runtime().block_on(async {
        let closed_port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut environment = S3Server::shared().environment();
        environment.retain(|(name, _)| name != "AWS_ENDPOINT_URL");
        environment.push((
            "AWS_ENDPOINT_URL".to_owned(),
            format!("http://127.0.0.1:{closed_port}"),
        ));
        let store =
            BlobStore::remote_in(&location("nowhere"), DEFAULT_BLOB_TTL, &environment).unwrap();
        let message = store.check_access().await.unwrap_err().to_string();
        assert!(
            message.contains("--blob-store")
                && message.contains("s3://nowhere/team/skillbox")
                && message.contains("AWS_ENDPOINT_URL"),
            "{message}"
        );
        // Plain HTTP to another machine is refused before anything is sent.
        environment.retain(|(name, _)| name != "AWS_ENDPOINT_URL");
        environment.push((
            "AWS_ENDPOINT_URL".to_owned(),
            "http://s3.example.com".to_owned(),
        ));
        let message = BlobStore::remote_in(&location("b"), DEFAULT_BLOB_TTL, &environment)
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("AWS_ENDPOINT_URL") && message.contains("AWS_ALLOW_HTTP"),
            "{message}"
        );
    });
}

/// The raw bucket handle is a plain `ObjectStore` too: the shared server lists what the store
/// wrote, so the helpers the replica tests use are checked against the client.
#[test]
fn the_server_lists_what_the_client_wrote() {
    skillbox_testkit::runtime().block_on(async {
        let server = S3Server::shared();
        let bucket = server.create_bucket();
        let raw: Arc<dyn object_store::ObjectStore> = Arc::new(raw_bucket(&bucket));
        raw.put(&"x/y".into(), "12345".into()).await.unwrap();
        assert_eq!(
            server.keys(&bucket, "x/"),
            [skillbox_testkit::s3_server::ListedObject {
                key: "x/y".to_owned(),
                size: 5
            }]
        );
    });
}
