export { buildApp, restRoutes, REST_PREFIX, type BuiltApp } from './app.js';
export { readServerConfig, type ServerConfig } from './config.js';
export { startServer, type RunningServer } from './server.js';
