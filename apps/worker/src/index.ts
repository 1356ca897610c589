export { startWorker, JOBS, type RunningWorker, type WorkerOptions } from './worker.js';
export { defineJobHandler, type JobHandler } from './jobs/job.js';
