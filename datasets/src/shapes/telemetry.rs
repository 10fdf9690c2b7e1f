//! The `bench.Reading` shape: one IoT sensor reading with 16 vibration samples.
//!
//! A fleet of 2048 devices (ids of 3–5 varint bytes) reports in an interleaved stream. `ts` is a
//! 2025 instant in microseconds (an 8-byte varint) that advances ~1 ms per reading with up to
//! 50 ms of lateness; `seq` counts per device from a random start (2–4 bytes); `battery_mv`
//! spans 2800–4200 (2-byte varints); `status` is OK 90 %, WARN 6 %, FAIL 2 %,
//! OFFLINE 2 % (1 byte); `humidity` is null for the ~15 % of devices without that sensor and
//! for 2 % dropouts; `firmware` is a version string like `2.4.17`.

use std::f64::consts::FRAC_1_SQRT_2;

use serde::ser::{Serialize, SerializeTupleStruct, Serializer};

use super::RowGenerator;
use crate::rng::Rng;

/// Devices in the fleet.
const DEVICES: usize = 2048;
/// 2025-03-01T00:00:00Z in microseconds since the epoch.
const START_MICROS: i64 = 1_740_787_200_000_000;
/// Enum symbols of `bench.Status`, in schema order.
const STATUS_SYMBOLS: [&str; 4] = ["OK", "WARN", "FAIL", "OFFLINE"];
/// Firmware versions in the field, most common first.
const FIRMWARE: &[&str] = &[
    "2.4.17",
    "2.4.16",
    "2.5.0",
    "2.3.9",
    "2.5.1-rc2",
    "1.9.108",
    "3.0.0-beta.4",
    "2.10.3",
];
/// Relative frequency of each firmware version.
const FIRMWARE_WEIGHTS: &[u32] = &[40, 20, 12, 10, 6, 5, 3, 4];
/// One period of a sine wave in 16 steps (constants, no `sin` at run time).
const SINE16: [f64; 16] = [
    0.0,
    0.382_683_432_365_089_8,
    FRAC_1_SQRT_2,
    0.923_879_532_511_286_7,
    1.0,
    0.923_879_532_511_286_7,
    FRAC_1_SQRT_2,
    0.382_683_432_365_089_8,
    0.0,
    -0.382_683_432_365_089_8,
    -FRAC_1_SQRT_2,
    -0.923_879_532_511_286_7,
    -1.0,
    -0.923_879_532_511_286_7,
    -FRAC_1_SQRT_2,
    -0.382_683_432_365_089_8,
];

/// One `bench.Reading` record.
#[derive(Debug, Clone)]
pub(crate) struct Reading {
    device_id: i64,
    ts: i64,
    seq: i64,
    temperature: f32,
    humidity: Option<f32>,
    battery_mv: i32,
    status: u32,
    firmware: &'static str,
    samples: Vec<f64>,
}

/// Serializes an enum index as the `bench.Status` symbol.
struct Status(u32);

impl Serialize for Status {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_unit_variant("Status", self.0, STATUS_SYMBOLS[self.0 as usize])
    }
}

impl Serialize for Reading {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut r = serializer.serialize_tuple_struct("Reading", 9)?;
        r.serialize_field(&self.device_id)?;
        r.serialize_field(&self.ts)?;
        r.serialize_field(&self.seq)?;
        r.serialize_field(&self.temperature)?;
        r.serialize_field(&self.humidity)?;
        r.serialize_field(&self.battery_mv)?;
        r.serialize_field(&Status(self.status))?;
        r.serialize_field(self.firmware)?;
        r.serialize_field(self.samples.as_slice())?;
        r.end()
    }
}

/// The fixed properties and running state of one device.
#[derive(Debug, Clone)]
struct Device {
    id: i64,
    next_seq: i64,
    base_temperature: f64,
    base_humidity: f64,
    has_humidity: bool,
    battery_mv: i32,
    firmware: &'static str,
    amplitude: f64,
    phase: usize,
}

/// Generates `bench.Reading` rows.
#[derive(Debug)]
pub(crate) struct TelemetryGenerator {
    devices: Vec<Device>,
    clock: i64,
    row: Reading,
}

impl RowGenerator for TelemetryGenerator {
    type Row = Reading;

    fn new(rng: &mut Rng) -> Self {
        let devices = (0..DEVICES)
            .map(|_| Device {
                id: rng.varint_mixed(3, &[30, 50, 20]),
                next_seq: rng.varint_mixed(2, &[20, 50, 30]),
                base_temperature: 15.0 + rng.unit() * 15.0,
                base_humidity: 30.0 + rng.unit() * 40.0,
                has_humidity: rng.chance(0.85),
                battery_mv: rng.range(2_800, 4_200) as i32,
                firmware: FIRMWARE[rng.weighted(FIRMWARE_WEIGHTS)],
                amplitude: 0.05 + rng.unit() * 2.0,
                phase: rng.index(16),
            })
            .collect();
        TelemetryGenerator {
            devices,
            clock: START_MICROS + rng.range(0, 86_400_000_000),
            row: Reading {
                device_id: 0,
                ts: 0,
                seq: 0,
                temperature: 0.0,
                humidity: None,
                battery_mv: 0,
                status: 0,
                firmware: FIRMWARE[0],
                samples: vec![0.0; 16],
            },
        }
    }

    fn next_row(&mut self, rng: &mut Rng) -> &Reading {
        self.clock += rng.range(0, 2_000);
        let dev = &mut self.devices[rng.index(DEVICES)];
        let row = &mut self.row;
        row.device_id = dev.id;
        row.ts = self.clock - rng.range(0, 50_000);
        row.seq = dev.next_seq;
        dev.next_seq += 1;
        row.temperature = (dev.base_temperature + 0.8 * rng.normalish()) as f32;
        row.humidity = if dev.has_humidity && !rng.chance(0.02) {
            Some((dev.base_humidity + 3.0 * rng.normalish()) as f32)
        } else {
            None
        };
        // Slow drain with recharges back to full.
        if rng.chance(0.01) {
            dev.battery_mv -= 1;
            if dev.battery_mv < 2_800 {
                dev.battery_mv = 4_200;
            }
        }
        row.battery_mv = dev.battery_mv + rng.range(-8, 8) as i32;
        row.status = rng.weighted(&[90, 6, 2, 2]) as u32;
        row.firmware = dev.firmware;
        let offset = rng.normalish() * 0.01;
        for (k, s) in row.samples.iter_mut().enumerate() {
            *s = offset
                + dev.amplitude * SINE16[(k + dev.phase) % 16]
                + 0.02 * dev.amplitude * rng.normalish();
        }
        &self.row
    }
}
