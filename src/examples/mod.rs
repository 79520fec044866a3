//! Example implementations of the services an embedder binds, for the demo, the tests
//! and the benches, and to read as a model. They are real services, not mocks, but
//! not meant for production use.

pub mod scripted_agents;
