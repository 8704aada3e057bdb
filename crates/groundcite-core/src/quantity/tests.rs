//! Extraction and checking through the public entry points.

use super::*;

fn texts(s: &str) -> Vec<String> {
    extract(s).into_iter().map(|q| q.text).collect()
}

fn canon(s: &str) -> Vec<String> {
    extract(s).iter().map(Quantity::canonical).collect()
}

#[test]
fn basic_forms() {
    assert_eq!(canon("within 30 days"), ["30 day"]);
    assert_eq!(canon("a thirty-day window"), ["30 day"]);
    assert_eq!(canon("a 30-day window"), ["30 day"]);
    assert_eq!(canon("12% off"), ["12%"]);
    assert_eq!(canon("12 per cent off"), ["12%"]);
    assert_eq!(
        canon("€50 or 50 euros or EUR 50"),
        ["50 EUR", "50 EUR", "50 EUR"]
    );
    assert_eq!(canon("1,000 users"), ["1000"]);
    assert_eq!(canon("one thousand users"), ["1000"]);
    assert_eq!(canon("on 2026-11-30"), ["2026-11-30"]);
    assert_eq!(canon("on 30 November 2026"), ["2026-11-30"]);
    assert_eq!(canon("on November 30, 2026"), ["2026-11-30"]);
    assert_eq!(canon("Q3 results"), ["Q3"]);
    assert_eq!(canon("the third quarter"), ["Q3"]);
    assert_eq!(canon("the 21st payment"), ["ordinal 21"]);
    assert_eq!(canon("the twenty-first payment"), ["ordinal 21"]);
    assert_eq!(canon("one hundred and five items"), ["105"]);
    assert_eq!(canon("a dozen eggs"), ["12"]);
    assert_eq!(canon("half an hour"), ["0.5 hour"]);
}

#[test]
fn not_quantities() {
    assert!(texts("Update to version 2.0 or v1.2.3.").is_empty());
    assert!(texts("Call +1 800 555 0100 or 1-800-555-0100.").is_empty());
    assert!(texts("Your order #12345 shipped.").is_empty());
    assert!(texts("See SKU-123 on Windows 11 with TLS 1.3.").is_empty());
    assert!(texts("Refunds are available.[1]").is_empty());
    assert!(texts("Support is open 24/7 with two-factor authentication.").is_empty());
    assert!(texts("First, open Settings.").is_empty());
    assert!(texts("Pick one of the plans.").is_empty());
}

#[test]
fn ranges_share_units() {
    assert_eq!(canon("20-30 days"), ["20 day", "30 day"]);
    assert_eq!(canon("between 2 and 4 weeks"), ["2 week", "4 week"]);
    assert_eq!(canon("$20-30"), ["20 $", "30 $"]);
}

#[test]
fn the_issue_example() {
    let c = check_claim(
        "The refund window is 2 weeks.",
        &["Refunds are available within 30 days of purchase."],
    );
    assert_eq!(c.unsupported.len(), 1);
    assert!(check_claim("You get 14 days.", &["within 2 weeks"]).is_consistent());
    assert!(check_claim("You get 2 weeks.", &["within fourteen days"]).is_consistent());
    assert!(!check_claim("You get a month.", &["within 30 days"]).is_consistent());
}
