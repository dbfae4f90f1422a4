//! Shards of `compose`'s bake jobs, for a render farm.
//!
//! A world's bake jobs (one per distinct tile × character × options) are
//! named by a content hash ([`job_hash`]); shard M of N holds the jobs whose
//! mixed hash is M − 1 modulo N — cargo-nextest's `--partition hash:M/N`
//! model: a job never changes shard when others are added or removed, and
//! shards need no list shared between machines. The shard comes from
//! `--shard M/N` or from the scheduler's array index
//! ([`ShardFrom`]: Slurm job arrays, Kubernetes Indexed Jobs, AWS Batch
//! array jobs, or any variable holding a 0-based index).

use std::hash::Hasher;

/// The most shards of one world (a farm's array size).
pub const MAX_SHARDS: u32 = 100_000;

/// One shard: 1-based `index` of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// Which shard, 1 ≤ index ≤ count.
    pub index: u32,
    /// How many shards.
    pub count: u32,
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Shard {
    /// Whether the job of hash `job` falls in this shard.
    pub fn holds(self, job: u64) -> bool {
        shard_of(job, self.count) == self.index
    }
}

/// The 1-based shard of `count` that holds the job of hash `job`: its
/// hash mixed (SplitMix64's finaliser, so that every bit counts) modulo
/// `count`, plus one. O(1).
///
/// # Panics
/// If `count` is 0.
pub fn shard_of(job: u64, count: u32) -> u32 {
    let mut z = job;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z % u64::from(count)) as u32 + 1
}

/// The content hash of a bake job: FNV-1a (64 bit) of the tile's key (the
/// hash of its document and of the crowdpatch version), the bake's settings
/// stamp and the content hash of every file the bake reads besides the
/// document. Paths do not enter it, so machines that mount the inputs in
/// different places agree on it. O(length of the parts).
pub fn job_hash(tile_key: &str, stamp: &str) -> u64 {
    let mut h = fnv::FnvHasher::default();
    h.write(tile_key.as_bytes());
    h.write(&[0]);
    h.write(stamp.as_bytes());
    h.finish()
}

/// The FNV-1a (64 bit) hash of a file's bytes, as 16 hexadecimal digits.
///
/// # Errors
/// When the file cannot be read. Reads the whole file.
pub fn file_hash(path: &std::path::Path) -> std::io::Result<String> {
    Ok(bytes_hash(&std::fs::read(path)?))
}

/// The FNV-1a (64 bit) hash of `bytes`, as 16 hexadecimal digits. O(n).
pub fn bytes_hash(bytes: &[u8]) -> String {
    let mut h = fnv::FnvHasher::default();
    h.write(bytes);
    format!("{:016x}", h.finish())
}

/// Parses `M/N` (1 ≤ M ≤ N ≤ [`MAX_SHARDS`]), as `--shard` takes it.
///
/// # Errors
/// A message naming what is wrong with the value.
pub fn parse_shard(s: &str) -> Result<Shard, String> {
    let (m, n) = s.split_once('/').ok_or_else(|| format!("'{s}' is not M/N (shard M of N, e.g. 2/8)"))?;
    let count = parse_count(n).map_err(|e| format!("'{s}': {e}"))?;
    let index: u32 = m.trim().parse().map_err(|_| format!("'{s}': M = '{m}' is not a whole number"))?;
    if index == 0 || index > count {
        return Err(format!("'{s}': M must be within 1..={count} (shards are counted from 1)"));
    }
    Ok(Shard { index, count })
}

/// Parses a shard count N (1 ≤ N ≤ [`MAX_SHARDS`]), as `--shards` takes it.
///
/// # Errors
/// A message naming what is wrong with the value.
pub fn parse_count(s: &str) -> Result<u32, String> {
    let n: u32 = s.trim().parse().map_err(|_| format!("N = '{s}' is not a whole number"))?;
    if n == 0 || n > MAX_SHARDS {
        return Err(format!("N = {n} must be within 1..={MAX_SHARDS}"));
    }
    Ok(n)
}

/// Where a shard's index comes from when a scheduler starts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShardFrom {
    /// A Slurm job array: `SLURM_ARRAY_TASK_ID` less `SLURM_ARRAY_TASK_MIN`
    /// (over `SLURM_ARRAY_TASK_STEP`), of `SLURM_ARRAY_TASK_COUNT` shards.
    Slurm,
    /// A Kubernetes Indexed Job: `JOB_COMPLETION_INDEX` (0-based); the count
    /// (the Job's `completions`) from `--shards`.
    K8s,
    /// An AWS Batch array job: `AWS_BATCH_JOB_ARRAY_INDEX` (0-based); the
    /// count (the array size) from `--shards`.
    Aws,
    /// Any variable holding a 0-based index (Deadline, Tractor, a shell
    /// loop); the count from `--shards`.
    Env(String),
}

/// Parses `slurm`, `k8s`, `aws` or `env:NAME`, as `--shard-from` takes it.
///
/// # Errors
/// A message listing the accepted values.
pub fn parse_shard_from(s: &str) -> Result<ShardFrom, String> {
    match s {
        "slurm" => Ok(ShardFrom::Slurm),
        "k8s" | "kubernetes" => Ok(ShardFrom::K8s),
        "aws" => Ok(ShardFrom::Aws),
        _ => match s.strip_prefix("env:") {
            Some(name) if !name.is_empty() && !name.contains('=') => Ok(ShardFrom::Env(name.to_owned())),
            _ => Err(format!("'{s}' is not one of slurm, k8s, aws, env:NAME")),
        },
    }
}

impl ShardFrom {
    /// The shard this process is, read from the scheduler's variables
    /// through `var` (`std::env::var` in the tool), of `count` shards when
    /// given (`--shards`; Slurm's own count otherwise, and both must agree).
    ///
    /// # Errors
    /// A message naming the variable that is missing or wrong, and its value.
    pub fn resolve(&self, count: Option<u32>, var: impl Fn(&str) -> Option<String>) -> Result<Shard, String> {
        let read = |name: &str| -> Result<Option<u64>, String> {
            match var(name) {
                None => Ok(None),
                Some(v) => {
                    v.trim().parse::<u64>().map(Some).map_err(|_| format!("{name} = '{v}' is not a whole number ≥ 0"))
                }
            }
        };
        let need = |name: &str, how: &str| -> Result<u64, String> {
            read(name)?.ok_or_else(|| format!("{name} is not set ({how}; or give --shard M/N)"))
        };
        let need_count = |what: &str| -> Result<u32, String> {
            count.ok_or_else(|| format!("--shard-from {what} needs --shards N (the number of array tasks)"))
        };
        let (index0, count) = match self {
            ShardFrom::Slurm => {
                let id = need("SLURM_ARRAY_TASK_ID", "run it as a task of a Slurm job array, sbatch --array")?;
                let min = read("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
                let step = read("SLURM_ARRAY_TASK_STEP")?.unwrap_or(1).max(1);
                if id < min || (id - min) % step != 0 {
                    return Err(format!(
                        "SLURM_ARRAY_TASK_ID = {id} is not on the array's range (min {min}, step {step})"
                    ));
                }
                let own = read("SLURM_ARRAY_TASK_COUNT")?;
                let n = match (count, own) {
                    (Some(n), Some(s)) if u64::from(n) != s => {
                        return Err(format!("--shards {n} differs from SLURM_ARRAY_TASK_COUNT = {s}"));
                    }
                    (Some(n), _) => n,
                    (None, Some(s)) => {
                        parse_count(&s.to_string()).map_err(|e| format!("SLURM_ARRAY_TASK_COUNT: {e}"))?
                    }
                    (None, None) => {
                        return Err("SLURM_ARRAY_TASK_COUNT is not set; give --shards N".to_owned());
                    }
                };
                ((id - min) / step, n)
            }
            ShardFrom::K8s => (
                need("JOB_COMPLETION_INDEX", "run it in a Kubernetes Job with completionMode: Indexed")?,
                need_count("k8s")?,
            ),
            ShardFrom::Aws => {
                (need("AWS_BATCH_JOB_ARRAY_INDEX", "run it as an AWS Batch array job")?, need_count("aws")?)
            }
            ShardFrom::Env(name) => (need(name, "the variable holds the 0-based shard index")?, need_count("env:")?),
        };
        if index0 >= u64::from(count) {
            return Err(format!("the scheduler's index {index0} (0-based) is not below the {count} shards"));
        }
        Ok(Shard { index: index0 as u32 + 1, count })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: HashMap<String, String> = pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        move |k| m.get(k).cloned()
    }

    #[test]
    fn every_job_falls_in_exactly_one_shard_and_shards_are_balanced() {
        let jobs: Vec<u64> = (0..6000).map(|k| job_hash(&format!("{k:016x}"), "animation None")).collect();
        for n in [1, 2, 3, 7] {
            let mut sizes = vec![0usize; n as usize];
            for &j in &jobs {
                let shards: Vec<u32> = (1..=n).filter(|&m| Shard { index: m, count: n }.holds(j)).collect();
                assert_eq!(shards.len(), 1, "job {j:x} in shards {shards:?} of {n}");
                sizes[shards[0] as usize - 1] += 1;
            }
            let mean = jobs.len() as f64 / f64::from(n);
            for s in &sizes {
                assert!((*s as f64 - mean).abs() < 0.1 * mean, "{n} shards: sizes {sizes:?}");
            }
        }
    }

    #[test]
    fn a_job_keeps_its_shard_when_jobs_are_added() {
        let before: Vec<u64> = (0..50).map(|k| job_hash(&format!("tile{k}"), "s")).collect();
        let shard_before: Vec<u32> = before.iter().map(|&j| shard_of(j, 4)).collect();
        let after: Vec<u64> = (0..80).map(|k| job_hash(&format!("tile{k}"), "s")).collect();
        assert_eq!(shard_before, after[..50].iter().map(|&j| shard_of(j, 4)).collect::<Vec<_>>());
        // The stamp is part of the job: other settings, another job.
        assert_ne!(job_hash("tile0", "s"), job_hash("tile0", "t"));
        assert_ne!(job_hash("ab", "c"), job_hash("a", "bc"));
    }

    #[test]
    fn shard_values_parse_or_say_why_not() {
        assert_eq!(parse_shard("2/8"), Ok(Shard { index: 2, count: 8 }));
        assert_eq!(parse_shard("1/1"), Ok(Shard { index: 1, count: 1 }));
        for bad in ["0/3", "4/3", "3", "a/3", "1/0", "1/-2", "1/100001", ""] {
            let e = parse_shard(bad).unwrap_err();
            assert!(e.contains(bad) || bad.is_empty() || e.contains("N ="), "{bad}: {e}");
        }
        assert_eq!(parse_shard_from("slurm"), Ok(ShardFrom::Slurm));
        assert_eq!(parse_shard_from("env:TASK"), Ok(ShardFrom::Env("TASK".into())));
        assert!(parse_shard_from("env:").is_err());
        assert!(parse_shard_from("pbs").unwrap_err().contains("slurm, k8s, aws"));
    }

    #[test]
    fn schedulers_indices_become_shards() {
        // sbatch --array=1-4: ids 1..4, min 1.
        let slurm =
            env(&[("SLURM_ARRAY_TASK_ID", "3"), ("SLURM_ARRAY_TASK_MIN", "1"), ("SLURM_ARRAY_TASK_COUNT", "4")]);
        assert_eq!(ShardFrom::Slurm.resolve(None, &slurm), Ok(Shard { index: 3, count: 4 }));
        assert!(ShardFrom::Slurm.resolve(Some(5), &slurm).unwrap_err().contains("SLURM_ARRAY_TASK_COUNT = 4"));
        // sbatch --array=0-30:10: ids 0, 10, 20, 30.
        let stepped = env(&[
            ("SLURM_ARRAY_TASK_ID", "20"),
            ("SLURM_ARRAY_TASK_MIN", "0"),
            ("SLURM_ARRAY_TASK_STEP", "10"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ]);
        assert_eq!(ShardFrom::Slurm.resolve(None, &stepped), Ok(Shard { index: 3, count: 4 }));
        let k8s = env(&[("JOB_COMPLETION_INDEX", "0")]);
        assert_eq!(ShardFrom::K8s.resolve(Some(6), &k8s), Ok(Shard { index: 1, count: 6 }));
        assert!(ShardFrom::K8s.resolve(None, &k8s).unwrap_err().contains("--shards N"));
        let aws = env(&[("AWS_BATCH_JOB_ARRAY_INDEX", "6")]);
        assert!(ShardFrom::Aws.resolve(Some(6), &aws).unwrap_err().contains("not below the 6 shards"));
        assert!(
            ShardFrom::Aws.resolve(Some(6), env(&[])).unwrap_err().contains("AWS_BATCH_JOB_ARRAY_INDEX is not set")
        );
        let bad = env(&[("TASK", "two")]);
        assert!(ShardFrom::Env("TASK".into()).resolve(Some(2), &bad).unwrap_err().contains("TASK = 'two'"));
    }
}
