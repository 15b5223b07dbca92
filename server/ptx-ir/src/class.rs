//! Instruction classes: the vocabulary every model counts in.
//!
//! The classes follow the functional units of an NVIDIA SM (CUDA C++ Programming Guide,
//! "Arithmetic Instructions" throughput table) and the state spaces of PTX (PTX ISA §5.1).

/// A PTX state space as seen by a memory instruction. With the `serde` feature it
/// serialises as its [`Space::name`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Space {
    Global,
    Shared,
    Local,
    Const,
    Param,
    Texture,
    /// No state space given: the address is generic and resolved at run time.
    Generic,
}

impl Space {
    pub const ALL: [Space; 7] = [
        Space::Global,
        Space::Shared,
        Space::Local,
        Space::Const,
        Space::Param,
        Space::Texture,
        Space::Generic,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Space::Global => "global",
            Space::Shared => "shared",
            Space::Local => "local",
            Space::Const => "const",
            Space::Param => "param",
            Space::Texture => "texture",
            Space::Generic => "generic",
        }
    }
}

/// The class of one instruction. With the `serde` feature it serialises as its
/// [`InstrClass::name`] string, so it can key a JSON object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum InstrClass {
    /// Integer and bitwise ALU: `add.s32 mul.lo mad shl and setp.s32 ...`.
    IntAlu,
    /// Single precision: `add.f32 fma.rn.f32 setp.f32 ...`.
    Fp32,
    /// Double precision: `add.f64 fma.rn.f64 ...`.
    Fp64,
    /// Half precision and bfloat16, scalar and packed.
    Fp16,
    /// Special function unit: `sin cos ex2 lg2 rsqrt rcp.approx sqrt.approx tanh`.
    Sfu,
    /// Tensor cores: `mma wmma wgmma`.
    Tensor,
    /// `cvt cvta` and friends.
    Conversion,
    /// `mov` and `selp`-like data movement between registers.
    Move,
    Load(Space),
    Store(Space),
    /// `atom` and `red` in any state space.
    Atomic(Space),
    /// `bar barrier bar.warp.sync`.
    Barrier,
    /// `membar fence`.
    Fence,
    /// `shfl vote match redux activemask`.
    WarpLevel,
    /// `bra brx`.
    Branch,
    Call,
    Return,
    /// Everything else (`nanosleep`, `prmt`-free misc ops, `cp.async` waits, ...).
    Other,
}

impl InstrClass {
    /// A stable snake_case name, used as the key in JSON and in the docs.
    pub fn name(self) -> String {
        match self {
            InstrClass::IntAlu => "int_alu".into(),
            InstrClass::Fp32 => "fp32".into(),
            InstrClass::Fp64 => "fp64".into(),
            InstrClass::Fp16 => "fp16".into(),
            InstrClass::Sfu => "sfu".into(),
            InstrClass::Tensor => "tensor".into(),
            InstrClass::Conversion => "conversion".into(),
            InstrClass::Move => "move".into(),
            InstrClass::Load(s) => format!("load_{}", s.name()),
            InstrClass::Store(s) => format!("store_{}", s.name()),
            InstrClass::Atomic(s) => format!("atomic_{}", s.name()),
            InstrClass::Barrier => "barrier".into(),
            InstrClass::Fence => "fence".into(),
            InstrClass::WarpLevel => "warp_level".into(),
            InstrClass::Branch => "branch".into(),
            InstrClass::Call => "call".into(),
            InstrClass::Return => "return".into(),
            InstrClass::Other => "other".into(),
        }
    }

    /// The inverse of [`InstrClass::name`].
    pub fn from_name(name: &str) -> Option<InstrClass> {
        let space = |s: &str| Space::ALL.into_iter().find(|it| it.name() == s);
        Some(match name {
            "int_alu" => InstrClass::IntAlu,
            "fp32" => InstrClass::Fp32,
            "fp64" => InstrClass::Fp64,
            "fp16" => InstrClass::Fp16,
            "sfu" => InstrClass::Sfu,
            "tensor" => InstrClass::Tensor,
            "conversion" => InstrClass::Conversion,
            "move" => InstrClass::Move,
            "barrier" => InstrClass::Barrier,
            "fence" => InstrClass::Fence,
            "warp_level" => InstrClass::WarpLevel,
            "branch" => InstrClass::Branch,
            "call" => InstrClass::Call,
            "return" => InstrClass::Return,
            "other" => InstrClass::Other,
            _ => {
                if let Some(s) = name.strip_prefix("load_") {
                    InstrClass::Load(space(s)?)
                } else if let Some(s) = name.strip_prefix("store_") {
                    InstrClass::Store(space(s)?)
                } else if let Some(s) = name.strip_prefix("atomic_") {
                    InstrClass::Atomic(space(s)?)
                } else {
                    return None;
                }
            }
        })
    }

    pub fn is_memory(self) -> bool {
        matches!(
            self,
            InstrClass::Load(_) | InstrClass::Store(_) | InstrClass::Atomic(_)
        )
    }

    pub fn space(self) -> Option<Space> {
        match self {
            InstrClass::Load(s) | InstrClass::Store(s) | InstrClass::Atomic(s) => Some(s),
            _ => None,
        }
    }

    /// Arithmetic classes (what the MWP/CWP papers call "computation instructions").
    pub fn is_compute(self) -> bool {
        matches!(
            self,
            InstrClass::IntAlu
                | InstrClass::Fp32
                | InstrClass::Fp64
                | InstrClass::Fp16
                | InstrClass::Sfu
                | InstrClass::Tensor
                | InstrClass::Conversion
                | InstrClass::Move
        )
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for Space {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for Space {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        Space::ALL
            .into_iter()
            .find(|s| s.name() == name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown state space `{name}`")))
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for InstrClass {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.name())
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for InstrClass {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        InstrClass::from_name(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown instruction class `{name}`")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        let mut all = vec![
            InstrClass::IntAlu,
            InstrClass::Fp32,
            InstrClass::Fp64,
            InstrClass::Fp16,
            InstrClass::Sfu,
            InstrClass::Tensor,
            InstrClass::Conversion,
            InstrClass::Move,
            InstrClass::Barrier,
            InstrClass::Fence,
            InstrClass::WarpLevel,
            InstrClass::Branch,
            InstrClass::Call,
            InstrClass::Return,
            InstrClass::Other,
        ];
        for s in Space::ALL {
            all.extend([
                InstrClass::Load(s),
                InstrClass::Store(s),
                InstrClass::Atomic(s),
            ]);
        }
        for c in all {
            assert_eq!(InstrClass::from_name(&c.name()), Some(c), "{c:?}");
        }
        assert_eq!(InstrClass::from_name("load_nowhere"), None);
    }

    /// A state space reads back from its one name, and nothing else.
    #[cfg(feature = "serde")]
    #[test]
    fn spaces_deserialize_from_their_names() {
        use serde::Deserialize as _;
        use serde::de::value::{Error, StrDeserializer};
        for s in Space::ALL {
            assert_eq!(Space::deserialize(StrDeserializer::<Error>::new(s.name())), Ok(s));
        }
        let err = Space::deserialize(StrDeserializer::<Error>::new("Global")).expect_err("not a name");
        assert!(err.to_string().contains("unknown state space `Global`"), "{err}");
    }
}
