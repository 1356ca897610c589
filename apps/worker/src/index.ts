export { startWorker, JOBS, type RunningWorker, type WorkerOptions } from './worker.js';
