//! Building a level tensor from its stored values in storage order.

use arrow_buffer::ScalarBuffer;

use super::{AnyLevel, LevelFormat, LevelKind, rule};
use crate::buffer::{IndexBuffer, ValueBuffer};
use crate::error::{Error, Result};
use crate::tensor::TensorOptions;
use crate::types::{IndexType, Value};

/// Builds a level tensor from its stored values in storage order, each given by
/// its level coordinates and optionally the first level at which it starts new
/// nodes (else: the first level at which its coordinates differ from the previous
/// value's, at the start of that level's run; the leaf level for a repeat). Dense
/// levels are filled: positions no value reaches are empty subtrees (zeros when
/// the dense level is the last). Every byte it appends counts against `limit`.
pub(crate) struct LevelBuilder<V: Value> {
    format: LevelFormat,
    sizes: Vec<usize>,
    pos: Vec<Vec<u64>>,
    crd: Vec<Vec<u64>>,
    /// per dense level: the coordinate of the current node under its parent
    cur: Vec<Option<usize>>,
    prev: Option<Vec<usize>>,
    values: Vec<V>,
    spent: u64,
    limit: u64,
}

impl<V: Value> LevelBuilder<V> {
    pub(crate) fn new(shape: &[usize], format: LevelFormat, limit: u64) -> Result<Self> {
        let n = format.ndim();
        if shape.len() != n {
            return Err(Error::shape(
                "level tensor",
                format!("{n} dimensions (the format's levels)"),
                format!("{} dimensions", shape.len()),
            ));
        }
        let sizes = format.axis_order.iter().map(|&d| shape[d]).collect();
        let mut b = LevelBuilder {
            format,
            sizes,
            pos: vec![Vec::new(); n],
            crd: vec![Vec::new(); n],
            cur: vec![None; n],
            prev: None,
            values: Vec::new(),
            spent: 0,
            limit,
        };
        if b.format.levels[0].kind == LevelKind::Compressed {
            b.push_pos(0, 0)?;
        }
        Ok(b)
    }

    fn spend(&mut self, bytes: u64) -> Result<()> {
        self.spent = self.spent.saturating_add(bytes);
        if self.spent > self.limit {
            return Err(Error::Limit {
                what: "a level tensor's buffers".into(),
                needed: self.spent,
                limit: self.limit,
            });
        }
        Ok(())
    }

    fn push_pos(&mut self, l: usize, x: u64) -> Result<()> {
        self.spend(8)?;
        crate::alloc::push(&mut self.pos[l], x, "level positions")
    }

    fn push_value(&mut self, v: V) -> Result<()> {
        self.spend(V::TYPE.byte_width() as u64)?;
        crate::alloc::push(&mut self.values, v, "level values")
    }

    /// Nodes of compressed level `l` so far.
    fn nodes(&self, l: usize) -> u64 {
        (self.crd[l].len() / self.format.aos_width(l)) as u64
    }

    /// A node was just made at level `l`: its children start.
    fn begin_children(&mut self, l: usize) -> Result<()> {
        match self.format.levels.get(l + 1).map(|t| t.kind) {
            Some(LevelKind::Compressed) => self.push_pos(l + 1, self.nodes(l + 1)),
            Some(LevelKind::Dense) => {
                self.cur[l + 1] = None;
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Dense coordinates `from..to` of level `l` under the current parent become
    /// empty subtrees.
    fn skip(&mut self, l: usize, from: usize, to: usize) -> Result<()> {
        if from >= to {
            return Ok(());
        }
        let k = to - from;
        match self.format.levels.get(l + 1).map(|t| t.kind) {
            None => {
                self.spend((k as u64).saturating_mul(V::TYPE.byte_width() as u64))?;
                crate::alloc::grow(&mut self.values, k, "level values")?;
                self.values.resize(self.values.len() + k, V::ZERO);
            }
            Some(LevelKind::Compressed) => {
                self.spend((k as u64).saturating_mul(8))?;
                let at = self.nodes(l + 1);
                crate::alloc::grow(&mut self.pos[l + 1], k, "level positions")?;
                let len = self.pos[l + 1].len() + k;
                self.pos[l + 1].resize(len, at);
            }
            Some(LevelKind::Dense) => {
                let s = self.sizes[l + 1];
                for _ in 0..k {
                    self.skip(l + 1, 0, s)?;
                }
            }
            Some(LevelKind::Singleton) => {
                return Err(rule(l + 1, "a singleton level after a dense one"));
            }
        }
        Ok(())
    }

    fn open(&mut self, l: usize, c: usize, v: V) -> Result<()> {
        if c >= self.sizes[l] {
            return Err(Error::IndexOutOfBounds {
                buffer: format!("level {l} coordinates"),
                position: self.values.len(),
                value: c as i128,
                bound: self.sizes[l] as u64,
            });
        }
        match self.format.levels[l].kind {
            LevelKind::Dense => {
                let from = self.cur[l].map_or(0, |x| x + 1);
                if c < from {
                    return Err(Error::invariant(
                        format!("dense level {l}"),
                        Some(self.values.len()),
                        format!(
                            "coordinates must increase under a parent, found {c} after {}",
                            from - 1
                        ),
                    ));
                }
                self.skip(l, from, c)?;
                self.cur[l] = Some(c);
            }
            _ => {
                let (b, _, _) = self
                    .format
                    .coordinate_source(l)
                    .ok_or_else(|| rule(l, "no coordinates"))?;
                self.spend(8)?;
                crate::alloc::push(&mut self.crd[b], c as u64, "level coordinates")?;
            }
        }
        if l + 1 == self.sizes.len() {
            self.push_value(v)
        } else {
            self.begin_children(l)
        }
    }

    /// The current node of level `l` is complete: fill its remaining dense
    /// children.
    fn close(&mut self, l: usize) -> Result<()> {
        if self.format.levels.get(l + 1).map(|t| t.kind) == Some(LevelKind::Dense) {
            let from = self.cur[l + 1].map_or(0, |x| x + 1);
            self.skip(l + 1, from, self.sizes[l + 1])?;
        }
        Ok(())
    }

    /// Append one stored value.
    pub(crate) fn push(&mut self, lvl: &[usize], start: Option<usize>, v: V) -> Result<()> {
        let n = self.sizes.len();
        if lvl.len() != n {
            return Err(Error::shape(
                "level coordinates",
                format!("{n}"),
                lvl.len().to_string(),
            ));
        }
        let derived = match &self.prev {
            None => 0,
            Some(p) => (0..n).find(|&l| p[l] != lvl[l]).unwrap_or(n - 1),
        };
        let s = match start {
            Some(s) if s > derived || (self.prev.is_none() && s != 0) => {
                return Err(Error::invariant(
                    "level start",
                    Some(self.values.len()),
                    format!(
                        "{s} is below the first level ({derived}) at which the coordinates change"
                    ),
                ));
            }
            Some(s) => s,
            None => derived,
        };
        if self.format.levels[s].kind == LevelKind::Singleton && start.is_some() {
            return Err(Error::invariant(
                "level start",
                Some(self.values.len()),
                format!("level {s} is a singleton level: no node starts there alone"),
            ));
        }
        let s = self.format.run_start(s);
        if self.prev.is_some() {
            for l in (s..n).rev() {
                self.close(l)?;
            }
        }
        for (l, &c) in lvl.iter().enumerate().skip(s) {
            self.open(l, c, v)?;
        }
        self.prev = Some(lvl.to_vec());
        Ok(())
    }

    /// The level tensor (validated by `options`), with the given index types.
    pub(crate) fn finish(
        mut self,
        index_type: IndexType,
        indptr_type: IndexType,
        options: &TensorOptions,
    ) -> Result<AnyLevel> {
        let n = self.sizes.len();
        if self.prev.is_some() {
            for l in (0..n).rev() {
                self.close(l)?;
            }
        }
        if self.format.levels[0].kind == LevelKind::Dense {
            let from = self.cur[0].map_or(0, |x| x + 1);
            self.skip(0, from, self.sizes[0])?;
        }
        for l in 0..n {
            if self.format.levels[l].kind == LevelKind::Compressed {
                let end = self.nodes(l);
                self.push_pos(l, end)?;
            }
        }
        let buffer =
            |v: Vec<u64>, ty: IndexType, what: &str| IndexBuffer::UInt64(v.into()).cast(ty, what);
        let mut positions = Vec::with_capacity(n);
        let mut coordinates = Vec::with_capacity(n);
        let (pos, crd) = (std::mem::take(&mut self.pos), std::mem::take(&mut self.crd));
        for (l, (p, c)) in pos.into_iter().zip(crd).enumerate() {
            let t = self.format.levels[l];
            positions.push(match t.kind {
                LevelKind::Compressed => Some(buffer(p, indptr_type, "positions")?),
                _ => None,
            });
            coordinates.push(match self.format.has_coordinates(l) {
                true => Some(buffer(c, index_type, "coordinates")?),
                false => None,
            });
        }
        let shape = {
            let mut shape = vec![0usize; n];
            for (l, &d) in self.format.axis_order.iter().enumerate() {
                shape[d] = self.sizes[l];
            }
            shape
        };
        AnyLevel::try_new(
            shape,
            self.format,
            positions,
            coordinates,
            ValueBuffer::from(ScalarBuffer::from(self.values)),
            options,
        )?
        .with_index_types(index_type, indptr_type)
    }
}
