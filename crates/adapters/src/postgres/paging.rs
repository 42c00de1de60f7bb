//! Count-then-page, the one way every list is read: the size of the whole list, then one window
//! of it. The conversions between the domain's unsigned page and SQL's `BIGINT`s live here.

use diesel::dsl::{Limit, Offset};
use diesel::query_dsl::methods::{LimitDsl, OffsetDsl};
use domain::ports::{Page, PageRequest};

/// `rows` narrowed to the page's window (`LIMIT`, `OFFSET`).
pub(crate) fn window<Rows>(rows: Rows, page: PageRequest) -> Offset<Limit<Rows>>
where
    Rows: LimitDsl,
    Limit<Rows>: OffsetDsl,
{
    rows.limit(i64::from(page.limit))
        // Offsets past i64 are past every list: the window is empty.
        .offset(i64::try_from(page.offset).unwrap_or(i64::MAX))
}

/// A page from the list's `count(*)` and the window's items.
pub(crate) fn page<T>(count: i64, items: Vec<T>) -> Page<T> {
    Page {
        count: count.unsigned_abs(),
        items,
    }
}
