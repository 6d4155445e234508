//! dump
