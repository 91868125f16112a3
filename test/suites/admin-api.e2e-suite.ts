import { runArea } from './run-area';

runArea('admin-api');
