//! Zips whose end of central directory lies about how many entries they hold: the declared count
//! is read before `zip` reads (and reserves room for) that many entries, and a count over the
//! limit is refused at once as too many files.

use std::time::{Duration, Instant};

use adapters::UpstreamSettings;

use super::archives::zip;
use super::fake::Reply;
use super::limits::{download, invalid};

/// Offset of "total entries" (and, 2 bytes before, "entries on this disk") in the end record.
const END_ENTRIES: usize = 10;

/// The too-many-files refusal of the default limit, asserted to come quickly.
async fn refused_quickly(bytes: Vec<u8>) {
    let started = Instant::now();
    let result = download(bytes, Reply::bytes, |settings| settings).await;
    let limit = UpstreamSettings::default().max_files;
    assert_eq!(
        invalid(result),
        format!("The plugin has more than {limit} files and folders")
    );
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn a_zip_whose_end_record_declares_65534_entries_for_its_two_is_refused_as_too_many_files() {
    let mut bytes = zip(&[("b/", b""), ("b/plugin.json", b"{}")]);
    let end = bytes.len() - 22;
    for at in [end + END_ENTRIES - 2, end + END_ENTRIES] {
        bytes[at..at + 2].copy_from_slice(&65_534u16.to_le_bytes());
    }

    refused_quickly(bytes).await;
}

#[tokio::test]
async fn a_zip64_end_record_declaring_2_pow_60_entries_is_refused_as_too_many_files() {
    let claimed = 1u64 << 60;
    // A local header's signature, so the bytes read as a zip, then the zip64 end record, its
    // locator and the end record sending the reader to it.
    let mut bytes = b"PK\x03\x04".to_vec();
    let record = bytes.len() as u64;
    bytes.extend(b"PK\x06\x06");
    bytes.extend(44u64.to_le_bytes()); // the size of the rest of the record
    bytes.extend([45, 0, 45, 0]); // made by, needed: zip 4.5
    bytes.extend([0; 8]); // this disk, the directory's disk
    bytes.extend(claimed.to_le_bytes()); // entries on this disk
    bytes.extend(claimed.to_le_bytes()); // entries in all
    bytes.extend([0; 16]); // the directory's size and offset
    bytes.extend(b"PK\x06\x07");
    bytes.extend([0; 4]); // the zip64 end record's disk
    bytes.extend(record.to_le_bytes());
    bytes.extend(1u32.to_le_bytes()); // disks
    bytes.extend(b"PK\x05\x06");
    bytes.extend([0; 4]); // this disk, the directory's disk
    bytes.extend([0xff; 4]); // entries: see the zip64 record
    bytes.extend([0xff; 8]); // the directory's size and offset: see the zip64 record
    bytes.extend([0; 2]); // no comment

    refused_quickly(bytes).await;
}
