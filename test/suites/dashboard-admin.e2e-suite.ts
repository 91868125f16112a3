import { runArea } from './run-area';

runArea('dashboard-admin');
